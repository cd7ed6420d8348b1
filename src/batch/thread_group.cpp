#include "batch/thread_group.hpp"

namespace cudaconv {

void ThreadGroup::join_after(std::size_t keep) {
    for (std::size_t i = keep; i < threads_.size(); ++i) threads_[i].join();
    if (keep < threads_.size()) threads_.resize(keep);  // joined: no longer joinable
}

}  // namespace cudaconv
