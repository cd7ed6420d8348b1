#pragma once
// A zlib stream (RFC 1950/1951) whose only matches are runs: a byte
// repeated, coded as a match at distance 1. Each block has its own Huffman
// codes, fitted to its bytes. There is no search for earlier strings, which
// is most of a deflate compressor's work, so its speed does not depend on
// the data. On PNG rows of photos (Up filter) and of filtered images such as
// edge maps (None) that loses nothing: there, as zlib's Z_RLE strategy
// shows, almost every match an LZ77 search finds is a run (a 4000x3000 edge
// map: 7.7 MB with runs only, 8.5 MB from libdeflate's level 1 search, 9.7
// MB from zlib's). Where strings do repeat at a distance (drawings,
// screenshots) it compresses far worse, so the PNG writer tries both on a
// sample first (png_encoder.cpp).
#include <cstddef>
#include <cstdint>

namespace cudaconv {

// The most bytes run_deflate_zlib writes for `size` bytes of input: about
// the input's size (incompressible blocks are stored as they are).
std::size_t run_deflate_bound(std::size_t size);

// Writes the zlib stream of data[0, size) to out, which has room for
// run_deflate_bound(size) bytes; returns the stream's size. The stream is
// made of parts, runs of whole blocks each ended by an empty stored block
// (a "sync flush", as pigz does) so that the next starts on a whole byte;
// how many depends on the size alone (one up to 768 KB, at most 32). With
// threads > 1, up to `threads` parts are compressed at once on OpenCV's
// threads; otherwise they are written one after another on the calling
// thread. The bytes are the same whatever the thread count.
std::size_t run_deflate_zlib(const std::uint8_t* data, std::size_t size, std::uint8_t* out,
                             int threads = 1);

}  // namespace cudaconv
