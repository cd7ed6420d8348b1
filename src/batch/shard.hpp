#pragma once
// --shard K/N: the part of a batch one of N processes does. An input
// belongs to shard K when stable_hash(its path relative to its root) % N
// == K, so N processes given the same inputs, on one machine or many, do
// each input exactly once, whatever order their folders list in, and a
// rerun of shard K does the same inputs. The key is the path relative to
// its root (InputFile::relative): the same tree mounted at /data on one
// machine and /mnt/photos on another shards alike.
#include <cstdint>
#include <string>
#include <string_view>

namespace cudaconv {

// The most shards one batch splits into: past any cluster's job array.
constexpr std::uint64_t kMaxShards = 1'000'000;

struct Shard {
    std::uint64_t index = 0;  // K, from 0
    std::uint64_t count = 1;  // N

    bool holds(std::string_view key) const;
    std::string text() const;  // "K/N"
};

// "K/N" with 0 <= K < N <= kMaxShards, decimal digits only; throws
// UsageError naming what is wrong (4/4, 0/0, -1/3, a/b).
Shard parse_shard(const std::string& text);

// 64-bit FNV-1a of the key's bytes, then splitmix64's finaliser, so that
// names differing in one character spread over the shards. docs/SPEC.md
// states it, for scripts that want to predict a shard.
std::uint64_t shard_hash(std::string_view key);

}  // namespace cudaconv
