#include "hsdp/random/csprng.hpp"

#include <sodium.h>
#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace hsdp::random {

namespace {

void init_sodium() {
  // Thread-safe, idempotent: picks the fastest ChaCha20 implementation for this CPU.
  static const int status = sodium_init();
  if (status < 0) throw std::runtime_error("libsodium could not be initialised");
}

void fill_from_os(std::uint8_t* out, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t got = getrandom(out + done, size - done, 0);  // blocks until the pool is ready
    if (got < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("getrandom failed: ") + std::strerror(errno));
    }
    done += static_cast<std::size_t>(got);
  }
}

void put_u64(std::uint8_t* out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

}  // namespace

Key entropy_key() {
  Key k;
  fill_from_os(k.data(), k.size());
  return k;
}

std::uint64_t entropy_u64() {
  std::uint8_t b[8];
  fill_from_os(b, sizeof b);
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(b[i]) << (8 * i);
  return v;
}

Key seed_key(std::uint64_t seed) {
  init_sodium();
  static constexpr char kLabel[] = "hsdp seeded generator v1";
  std::uint8_t msg[sizeof kLabel - 1 + 8];
  std::memcpy(msg, kLabel, sizeof kLabel - 1);
  put_u64(msg + sizeof kLabel - 1, seed);
  Key k;
  crypto_generichash(k.data(), k.size(), msg, sizeof msg, nullptr, 0);
  return k;
}

Csprng::Csprng(const Key& key, std::uint64_t stream) : key_(key) {
  init_sodium();
  put_u64(nonce_.data(), stream);
}

Csprng Csprng::from_entropy() { return Csprng(entropy_key()); }
Csprng Csprng::from_seed(std::uint64_t seed) { return Csprng(seed_key(seed)); }

Key Csprng::derive_key(std::string_view label, std::uint64_t index) const {
  std::string msg(label);
  std::uint8_t idx[8];
  put_u64(idx, index);
  msg.append(reinterpret_cast<const char*>(idx), 8);
  Key k;
  crypto_generichash(k.data(), k.size(), reinterpret_cast<const unsigned char*>(msg.data()), msg.size(),
                     key_.data(), key_.size());
  return k;
}

void Csprng::refill() {
  auto* bytes = reinterpret_cast<unsigned char*>(buf_.data());
  std::memset(bytes, 0, sizeof buf_);
  // The keystream from block `block_` on (64-bit nonce and block counter: the original
  // ChaCha20, 2^64 blocks per stream), XORed onto zeros in place.
  crypto_stream_chacha20_xor_ic(bytes, bytes, sizeof buf_, nonce_.data(), block_, key_.data());
  block_ += sizeof buf_ / 64;
  pos_ = 0;
}

std::uint64_t Csprng::uniform_below(std::uint64_t n) {
  // Lemire 2019, "Fast random integer generation in an interval": x n / 2^64, rejecting the
  // (2^64 mod n) low values that would make some results more likely.
  u128 m = static_cast<u128>(next_u64()) * n;
  auto low = static_cast<std::uint64_t>(m);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<u128>(next_u64()) * n;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

u128 Csprng::uniform_below_u128(u128 n) {
  if (n <= 1) return 0;
  if (n <= (static_cast<u128>(1) << 64)) {
    if (n == (static_cast<u128>(1) << 64)) return next_u64();
    return uniform_below(static_cast<std::uint64_t>(n));
  }
  // bits of n - 1 (> 64): draw that many bits, reject values >= n (accepted with prob > 1/2).
  const u128 top = n - 1;
  const int hi_bits = 128 - __builtin_clzll(static_cast<std::uint64_t>(top >> 64)) - 64;
  const std::uint64_t hi_mask = hi_bits >= 64 ? ~0ULL : ((1ULL << hi_bits) - 1);
  for (;;) {
    const u128 v =
        (static_cast<u128>(next_u64() & hi_mask) << 64) | next_u64();
    if (v < n) return v;
  }
}

}  // namespace hsdp::random
