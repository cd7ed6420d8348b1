// Writing outputs so that no reader, and no interrupted run, ever sees part
// of one: a temporary file beside the destination, renamed over it once
// complete; a set of outputs (a stack's file a filter) has every file
// written beside its destination before any is renamed. A process-wide
// table of the temporary files being written lets a signal handler remove
// them.
//
// No fsync: the promise (docs/SPEC.md) is about failures and interrupts of
// cudaconv, which rename() covers on its own; only a power cut or kernel
// crash right after the rename could expose an empty file, and an fsync per
// output would cost milliseconds each in a batch of thousands.
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <system_error>

#include "base/errors.hpp"
#include "io/image_io.hpp"

namespace cudaconv {
namespace {

// Slots a block of the table holds: the writes of 64 workers at once.
constexpr int kPendingSlots = 64;
constexpr std::size_t kMaxTempPath = 4096;  // PATH_MAX on Linux
// Keeps ".NAME.cudaconv-XXXXXX" within NAME_MAX (255) for long names.
constexpr std::size_t kMaxNameInTemp = 200;
constexpr const char* kTempSuffix = ".cudaconv-XXXXXX";

// A slot is free, being filled, or names a temporary file that may exist.
// Lock-free atomics and fixed arrays: all a signal handler may touch. More
// writes at once than a block holds (-j above 64) link another block to
// the last; blocks are never freed, so a handler can walk them at any time.
enum SlotState : int { kFree, kFilling, kNamed };
struct PendingSlot {
    std::atomic<int> state{kFree};
    char path[kMaxTempPath];
};
struct PendingBlock {
    PendingSlot slots[kPendingSlots];
    std::atomic<PendingBlock*> next{nullptr};
};
PendingBlock g_pending;
static_assert(std::atomic<int>::is_always_lock_free &&
              std::atomic<PendingBlock*>::is_always_lock_free);

// The block after `block`, linked to it first if there is none (nullptr
// when there is no memory for one).
PendingBlock* next_block(PendingBlock& block) {
    PendingBlock* next = block.next.load(std::memory_order_acquire);
    if (next != nullptr) return next;
    auto* fresh = new (std::nothrow) PendingBlock;
    if (fresh == nullptr) return nullptr;
    if (block.next.compare_exchange_strong(next, fresh, std::memory_order_acq_rel)) return fresh;
    delete fresh;  // another write linked one first
    return next;
}

std::string errno_text(int err) { return std::generic_category().message(err); }

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
    throw WorkError(path + ": " + problem);
}

}  // namespace

// A temporary file created beside the destination and registered for
// remove_pending_temp_files(); removed again unless renamed into place.
class StagedFile::Temp {
public:
    // `folder` is "" or ends in '/'.
    Temp(const std::string& destination, const std::string& folder, const std::string& name) {
        const std::string pattern = folder + "." + name.substr(0, kMaxNameInTemp) + kTempSuffix;
        if (pattern.size() >= kMaxTempPath) fail(destination, "cannot write: the path is too long");
        // mkstemp fills in the slot's own copy of the pattern, so the
        // file's final name is there from the moment the file exists.
        char* buffer = claim_slot(pattern);
        if (buffer == nullptr) {
            unregistered_.assign(pattern.begin(), pattern.end());
            unregistered_.push_back('\0');
            buffer = unregistered_.data();
        }
        path_ = buffer;
        fd_ = ::mkstemp(buffer);
        if (fd_ < 0) {
            const int err = errno;
            release_slot();
            fail(destination, "cannot write: " + errno_text(err));
        }
    }

    ~Temp() {
        if (fd_ >= 0) ::close(fd_);
        if (!renamed_) ::unlink(path_);
        release_slot();
    }

    Temp(const Temp&) = delete;
    Temp& operator=(const Temp&) = delete;

    int fd() const { return fd_; }
    const char* path() const { return path_; }

    // close() reports some write errors (NFS, quotas) that write() did not.
    int close() {
        const int result = ::close(fd_);
        fd_ = -1;
        return result;
    }
    void mark_renamed() { renamed_ = true; }

private:
    char* claim_slot(const std::string& pattern) {
        for (PendingBlock* block = &g_pending; block != nullptr; block = next_block(*block)) {
            for (PendingSlot& slot : block->slots) {
                int expected = kFree;
                if (slot.state.compare_exchange_strong(expected, kFilling,
                                                       std::memory_order_acquire)) {
                    std::memcpy(slot.path, pattern.c_str(), pattern.size() + 1);
                    slot.state.store(kNamed, std::memory_order_release);
                    slot_ = &slot;
                    return slot.path;
                }
            }
        }
        return nullptr;  // no memory for another block: written, but not removed by a signal
    }
    void release_slot() {
        if (slot_ != nullptr) slot_->state.store(kFree, std::memory_order_release);
        slot_ = nullptr;
    }

    PendingSlot* slot_ = nullptr;
    std::string unregistered_;
    const char* path_ = nullptr;
    int fd_ = -1;
    bool renamed_ = false;
};

namespace {

// The umask without changing it: umask() can only be read by setting it,
// which would race with files other threads create meanwhile.
mode_t current_umask() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("Umask:", 0) == 0) {
            return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
        }
    }
    static std::mutex mutex;  // no /proc: fall back to the racy way
    const std::lock_guard<std::mutex> lock(mutex);
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return mask;
}

void write_stdout(const std::vector<std::uint8_t>& bytes) {
    // Whatever was printed through the stream buffers goes out first.
    std::cout.flush();
    std::fflush(stdout);
    if (const int err = write_all(STDOUT_FILENO, bytes.data(), bytes.size())) {
        fail("<stdout>", "cannot write: " + errno_text(err));
    }
}

}  // namespace

int write_all(int fd, const std::uint8_t* data, std::size_t size) {
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size);
        if (n > 0) {
            data += n;
            size -= static_cast<std::size_t>(n);
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            pollfd wait{fd, POLLOUT, 0};
            ::poll(&wait, 1, -1);
        } else {
            return n < 0 ? errno : EIO;  // 0 bytes written: no progress possible
        }
    }
    return 0;
}

std::string unwritable_folder_reason(const std::string& folder) {
    const std::string checked = folder.empty() ? "." : folder;
    std::error_code ec;
    const std::filesystem::file_status status = std::filesystem::status(checked, ec);
    if (std::filesystem::is_directory(status)) {
        // Files are made in it (a temporary, then renamed): write and search.
        if (::access(checked.c_str(), W_OK | X_OK) == 0) return "";
        const std::string name = folder.empty() ? "the current folder" : "the folder " + folder;
        return name + " is not writable (" + errno_text(errno) + ")";
    }
    if (std::filesystem::exists(status)) return folder + " is a file, not a folder";
    return "the folder " + folder + " does not exist";
}

StagedFile::StagedFile(const std::string& path, const std::vector<std::uint8_t>& bytes)
    : path_(path) {
    const std::size_t slash = path.find_last_of('/');
    const std::string folder = slash == std::string::npos ? "" : path.substr(0, slash + 1);
    const std::string name = path.substr(folder.size());
    struct stat info {};
    if (name.empty() || (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))) {
        fail(path, "is a directory");
    }

    temp_ = std::make_unique<Temp>(path, folder, name);
    if (const int err = write_all(temp_->fd(), bytes.data(), bytes.size())) {
        fail(path, "cannot write: " + errno_text(err));
    }
    // mkstemp creates 0600; an output should get what any new file gets.
    // Failure is ignored: some filesystems (FAT, some FUSE) keep no modes.
    (void)::fchmod(temp_->fd(), 0666 & ~current_umask());
    if (temp_->close() != 0) fail(path, "cannot write: " + errno_text(errno));
}

StagedFile::StagedFile(StagedFile&&) noexcept = default;
StagedFile& StagedFile::operator=(StagedFile&&) noexcept = default;
StagedFile::~StagedFile() = default;

void StagedFile::commit() {
    if (::rename(temp_->path(), path_.c_str()) != 0) {
        const int err = errno;
        fail(path_, err == EISDIR ? "is a directory" : "cannot write: " + errno_text(err));
    }
    temp_->mark_renamed();
    temp_.reset();  // frees its slot: the temporary name no longer exists
}

void write_file_atomically(const std::string& path, const std::vector<std::uint8_t>& bytes) {
    if (path == kStdStream) return write_stdout(bytes);
    StagedFile(path, bytes).commit();
}

void remove_pending_temp_files() noexcept {
    for (PendingBlock* block = &g_pending; block != nullptr;
         block = block->next.load(std::memory_order_acquire)) {
        for (PendingSlot& slot : block->slots) {
            if (slot.state.load(std::memory_order_acquire) == kNamed) ::unlink(slot.path);
        }
    }
}

}  // namespace cudaconv
