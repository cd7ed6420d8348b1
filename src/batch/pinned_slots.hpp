#pragma once
// Page-locked host buffers for decoded images on their way to the GPU. The
// GPU thread bounds a GPU batch (about 10 ms an image, 200 12-megapixel
// JPEGs to PNG, docs/PERFORMANCE.md "Batches"), and most of that is the
// upload from ordinary memory, which the driver stages through buffers of
// its own: 5.6-6.5 ms for 36 MB, against about 1.5 ms from page-locked
// memory. So a thread of the pipeline copies each image bound for the GPU
// into one of a few such slots before the GPU thread takes it.
//
// Few slots, made once and reused: locking 36 MB takes about 30 ms and holds
// up every other CUDA call meanwhile, so a pool of one buffer an image in
// flight gains nothing. A slot is leased from the
// copy until the image's run on the GPU has ended.
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <vector>

namespace cudaconv {

class PinnedSlots {
public:
    explicit PinnedSlots(int count);
    ~PinnedSlots();
    PinnedSlots(const PinnedSlots&) = delete;
    PinnedSlots& operator=(const PinnedSlots&) = delete;

    // A slot while it is leased; an empty lease holds none.
    class Lease {
    public:
        Lease() = default;
        Lease(Lease&& other) noexcept { *this = std::move(other); }
        Lease& operator=(Lease&& other) noexcept;
        ~Lease() { reset(); }
        void reset();  // gives the slot back
        explicit operator bool() const { return owner_ != nullptr; }
        void* data() const;

    private:
        friend class PinnedSlots;
        Lease(PinnedSlots* owner, int slot) : owner_(owner), slot_(slot) {}
        PinnedSlots* owner_ = nullptr;
        int slot_ = -1;
    };

    // A slot with room for `bytes`, waiting while every slot is leased; an
    // empty lease once stop() says so, or where CUDA cannot lock the memory
    // (the image then goes up from ordinary memory, as before).
    Lease acquire(std::size_t bytes, const std::function<bool()>& stop);

private:
    struct Slot {
        void* data = nullptr;
        std::size_t bytes = 0;
        bool leased = false;
    };
    void give_back(int slot);

    std::mutex mutex_;
    std::condition_variable freed_;
    std::vector<Slot> slots_;
};

}  // namespace cudaconv
