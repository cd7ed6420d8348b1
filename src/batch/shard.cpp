#include "batch/shard.hpp"

#include <fmt/format.h>

#include "base/errors.hpp"
#include "base/printable.hpp"

namespace cudaconv {

namespace {

// A number of K/N: decimal digits only, at most seven of them.
bool parse_count(std::string_view digits, std::uint64_t& value) {
    if (digits.empty() || digits.size() > 7) return false;
    value = 0;
    for (const char c : digits) {
        if (c < '0' || c > '9') return false;
        value = value * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return true;
}

}  // namespace

std::uint64_t shard_hash(std::string_view key) {
    std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a offset basis
    for (const char c : key) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ULL;  // FNV prime
    }
    h ^= h >> 30;  // splitmix64's finaliser
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return h;
}

bool Shard::holds(std::string_view key) const { return shard_hash(key) % count == index; }

std::string Shard::text() const { return fmt::format("{}/{}", index, count); }

Shard parse_shard(const std::string& text) {
    const auto fail = [&](const std::string& why) {
        return UsageError(fmt::format("--shard \"{}\": {}", printable(text), why));
    };
    const std::size_t slash = text.find('/');
    if (slash == std::string::npos) {
        throw fail("expected K/N, shard K of N counted from 0 (e.g. 0/4 to 3/4)");
    }
    Shard shard;
    if (!parse_count(std::string_view(text).substr(0, slash), shard.index) ||
        !parse_count(std::string_view(text).substr(slash + 1), shard.count)) {
        throw fail(fmt::format("K and N must be whole numbers, 0 <= K < N <= {}", kMaxShards));
    }
    if (shard.count == 0) throw fail("N must be at least 1");
    if (shard.count > kMaxShards) throw fail(fmt::format("N must be at most {}", kMaxShards));
    if (shard.index >= shard.count) {
        throw fail(fmt::format("K counts from 0, so shard K of {} is 0 to {}", shard.count,
                               shard.count - 1));
    }
    return shard;
}

}  // namespace cudaconv
