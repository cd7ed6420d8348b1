#pragma once
// A rank-1 filter's row and column as floats, copied to a variant's two
// __constant__ arrays: what separable and fast-separable both prepare. The
// host copies live in this object until clear() or its run's plan ends,
// so that the asynchronous copies can read them whenever the stream gets
// there.
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "filters/rank1.hpp"
#include "kernels/runtime/cuda_check.hpp"

namespace cudaconv {

class Rank1Constants {
public:
    // Factors the filter and queues the copies; throws CudaError naming
    // `variant` when the filter is not rank 1.
    template <typename RowSymbol, typename ColumnSymbol>
    void upload(const Filter& filter, const std::string& variant, const RowSymbol& row_symbol,
                const ColumnSymbol& column_symbol, cudaStream_t stream) {
        const auto factors = separate(filter);
        if (!factors) throw CudaError(variant + ": the filter is not rank 1");
        row_.assign(factors->row.begin(), factors->row.end());
        column_.assign(factors->column.begin(), factors->column.end());
        CUDA_CHECK(cudaMemcpyToSymbolAsync(row_symbol, row_.data(), row_.size() * sizeof(float), 0,
                                           cudaMemcpyHostToDevice, stream));
        CUDA_CHECK(cudaMemcpyToSymbolAsync(column_symbol, column_.data(),
                                           column_.size() * sizeof(float), 0,
                                           cudaMemcpyHostToDevice, stream));
    }

    const std::vector<float>& row() const { return row_; }

    void clear() {
        row_.clear();
        column_.clear();
    }

private:
    std::vector<float> row_;
    std::vector<float> column_;
};

}  // namespace cudaconv
