#pragma once
// Tensor maps for Hopper's tensor memory accelerator (cp.async.bulk.tensor,
// kernels/bulk_copy.cuh): the driver encodes them (cuTensorMapEncodeTiled),
// reached through the runtime's driver entry points, so cudaconv links no
// libcuda of its own and runs where the driver lacks the encoder (the walk
// then copies its rows itself).
#include <cuda.h>

#include <optional>

#include "kernels/device_job.hpp"

namespace cudaconv {

// A map over the job's input rows as 4-byte words, its pitch wide (the
// rows' padding included) and src_height rows tall, copied in boxes of
// box_words x box_rows. Reads outside it (rows above or below the image,
// words past the pitch) land as zeros. None where the driver has no
// encoder or the rows break the map's rules (a 16-byte aligned start and
// pitch, at most 256 words or rows a box).
std::optional<CUtensorMap> input_rows_map(const DeviceJob& job, int box_words, int box_rows);

}  // namespace cudaconv
