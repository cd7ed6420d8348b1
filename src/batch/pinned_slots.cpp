#include "batch/pinned_slots.hpp"

#include <chrono>
#include <utility>

#include "kernels/runtime/cuda_host.hpp"

namespace cudaconv {

PinnedSlots::PinnedSlots(int count) : slots_(static_cast<std::size_t>(count > 0 ? count : 1)) {}

PinnedSlots::~PinnedSlots() {
    for (Slot& s : slots_) {
        free_pinned(s.data);
    }
}

PinnedSlots::Lease& PinnedSlots::Lease::operator=(Lease&& other) noexcept {
    if (this != &other) {
        reset();
        owner_ = std::exchange(other.owner_, nullptr);
        slot_ = std::exchange(other.slot_, -1);
    }
    return *this;
}

void PinnedSlots::Lease::reset() {
    if (owner_ != nullptr) owner_->give_back(slot_);
    owner_ = nullptr;
    slot_ = -1;
}

void* PinnedSlots::Lease::data() const {
    return owner_ != nullptr ? owner_->slots_[static_cast<std::size_t>(slot_)].data : nullptr;
}

PinnedSlots::Lease PinnedSlots::acquire(std::size_t bytes, const std::function<bool()>& stop) {
    // How often a wait looks at `stop` (a signal handler cannot notify).
    constexpr auto kStopPoll = std::chrono::milliseconds(50);
    int slot = -1;
    {
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            if (stop()) return {};
            // A free slot that is large enough first, then any free one.
            for (std::size_t k = 0; k < slots_.size() && slot < 0; ++k) {
                if (!slots_[k].leased && slots_[k].bytes >= bytes) slot = static_cast<int>(k);
            }
            for (std::size_t k = 0; k < slots_.size() && slot < 0; ++k) {
                if (!slots_[k].leased) slot = static_cast<int>(k);
            }
            if (slot >= 0) break;
            freed_.wait_for(lock, kStopPoll);
        }
        slots_[static_cast<std::size_t>(slot)].leased = true;
    }
    // The slot is this thread's now: grown outside the lock (locking pages
    // takes about 30 ms for 36 MB).
    Slot& s = slots_[static_cast<std::size_t>(slot)];
    if (s.bytes < bytes) {
        free_pinned(s.data);
        s.bytes = 0;
        s.data = alloc_pinned(bytes);
        if (s.data == nullptr) {  // the image stays in ordinary memory
            give_back(slot);
            return {};
        }
        s.bytes = bytes;
    }
    return Lease(this, slot);
}

void PinnedSlots::give_back(int slot) {
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        slots_[static_cast<std::size_t>(slot)].leased = false;
    }
    freed_.notify_one();
}

}  // namespace cudaconv
