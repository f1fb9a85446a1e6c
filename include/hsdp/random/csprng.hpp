// The one source of randomness in hsdp (DESIGN.md "Randomness", docs/security.md): a
// cryptographically secure generator, the ChaCha20 stream cipher of libsodium, keyed with
// 256 bits from the operating system (getrandom) for every run without a seed, or with a key
// derived from a seed (reproducible: "seeded: for experiments, not for release").
//
// Why ChaCha20 from libsodium: its keystream is a CSPRNG whose state an observer cannot
// reconstruct from outputs (unlike Mersenne Twister, whose 624 outputs reveal the state); the
// same key gives the same stream on every machine (reproducible seeded runs); libsodium is a
// small, well-kept Debian library (libsodium-dev) with one-call primitives and no global
// configuration, constant-time in software (no AES-NI needed) and fast (AVX2 code paths:
// > 1 GB/s of keystream per core). OpenSSL's EVP ChaCha20 would do as well; libsodium's
// interface is smaller and its generic hash (BLAKE2b) derives keys from seeds and labels.
//
// Nothing else in src/ draws random numbers (tests/test_random.cpp greps for other engines).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace hsdp::random {

using Key = std::array<std::uint8_t, 32>;
/// 128-bit unsigned integers (a GCC/Clang extension; exact products of 64-bit values).
__extension__ typedef unsigned __int128 u128;

/// 256 bits from the operating system's entropy source (getrandom(2)). Throws
/// std::runtime_error when the system call fails.
Key entropy_key();
/// 64 bits from getrandom(2) (a master seed that a caller records, e.g. the audit's).
std::uint64_t entropy_u64();
/// The key of a seeded generator: BLAKE2b-256 of a domain label and the seed.
Key seed_key(std::uint64_t seed);

/// ChaCha20 keystream as a generator of uniform 64-bit words, bits and integers.
class Csprng {
 public:
  /// The keystream of `key` with stream number `stream` (the ChaCha20 nonce).
  explicit Csprng(const Key& key, std::uint64_t stream = 0);
  /// A generator keyed from the operating system (never reproducible).
  static Csprng from_entropy();
  /// A generator keyed from a seed (reproducible; for experiments).
  static Csprng from_seed(std::uint64_t seed);

  /// A key for a child generator (another process's, a trial's), derived from this
  /// generator's key and a label: BLAKE2b-256(key, label, index). Knowing the child key does
  /// not reveal this key.
  Key derive_key(std::string_view label, std::uint64_t index) const;
  const Key& key() const { return key_; }

  /// A uniform 64-bit word.
  std::uint64_t next_u64() {
    if (pos_ == kWords) refill();
    return buf_[pos_++];
  }
  /// A uniform bit.
  unsigned next_bit() {
    if (bits_left_ == 0) {
      bits_ = next_u64();
      bits_left_ = 64;
    }
    const unsigned b = static_cast<unsigned>(bits_ & 1u);
    bits_ >>= 1;
    --bits_left_;
    return b;
  }
  /// Uniform in {0, ..., n-1} without modulo bias (Lemire's multiply-and-reject); n >= 1.
  std::uint64_t uniform_below(std::uint64_t n);
  /// Uniform in {0, ..., n-1} for n up to 2^127 (rejection on the bit length).
  u128 uniform_below_u128(u128 n);
  /// Uniform in {lo, ..., hi}.
  std::int64_t uniform_int(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(uniform_below(static_cast<std::uint64_t>(hi - lo) + 1));
  }

  // UniformRandomBitGenerator, so that std::shuffle-style code could take it (src/ does not).
  using result_type = std::uint64_t;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type{0}; }
  result_type operator()() { return next_u64(); }

 private:
  static constexpr int kWords = 512;  // 4 KiB of keystream per refill (64 ChaCha20 blocks)
  void refill();
  Key key_;
  std::array<std::uint8_t, 8> nonce_{};
  std::uint64_t block_ = 0;  // the next 64-byte block counter
  std::array<std::uint64_t, kWords> buf_{};
  int pos_ = kWords;
  std::uint64_t bits_ = 0;
  int bits_left_ = 0;
};

}  // namespace hsdp::random
