// The one source of randomness in hsdp (DESIGN.md "Randomness", docs/security.md): a
// cryptographically secure generator, the ChaCha20 stream cipher (RFC 7539) of OpenSSL's
// libcrypto, keyed with 256 bits from the operating system (getrandom) for every run without a
// seed, or with a key derived from a seed (reproducible: "seeded: for experiments, not for
// release").
//
// Why ChaCha20, and from OpenSSL: its keystream is a CSPRNG whose state an observer cannot
// reconstruct from outputs (unlike Mersenne Twister, whose 624 outputs reveal the state); the
// same key gives the same stream on every machine (reproducible seeded runs); it is
// constant-time in software. OpenSSL (Debian's libssl-dev) is well kept and its assembly
// ChaCha20 gives 4.2 GB/s per core on this machine (AVX-512) where libsodium 1.0.18's gave
// 0.7 GB/s, and the noise samplers consume several words per draw. Keys are derived with
// SHA-256 (seeds) and HMAC-SHA256 (child keys).
//
// Nothing else in src/ draws random numbers (tests/test_random.cpp greps for other engines).
#pragma once

#include <array>
#include <atomic>
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
/// The key of a seeded generator: SHA-256 of a domain label and the seed.
Key seed_key(std::uint64_t seed);

namespace detail {
/// The number of fork(2)s this process descends from since it started (a pthread_atfork
/// child handler counts them; src/random/csprng.cpp): a generator keyed from entropy compares
/// it with the count at its keying before every draw.
extern std::atomic<std::uint32_t> forks;
}  // namespace detail

/// ChaCha20 keystream as a generator of uniform 64-bit words, bits and integers.
///
/// Fork (docs/security.md, "Randomness"): after fork(2), parent and child hold the same key,
/// position and buffered keystream. A generator keyed from the operating system
/// (from_entropy) re-keys itself from fresh entropy in the child on its first draw there: the
/// child never repeats the parent's draws (two forked workers' noises would otherwise cancel
/// when their models are subtracted), and the parent's stream is unchanged. A generator given
/// its key (a seed's, a derived one) is reproducible by contract and is left as it is: a seeded
/// experiment forked in two gives the same draws in both; give each worker its own seed.
class Csprng {
 public:
  /// The keystream of `key` with stream number `stream` (the ChaCha20 nonce).
  explicit Csprng(const Key& key, std::uint64_t stream = 0);
  ~Csprng();
  Csprng(const Csprng& other);
  Csprng& operator=(const Csprng&) = delete;
  /// A generator keyed from the operating system (never reproducible).
  static Csprng from_entropy();
  /// A generator keyed from a seed (reproducible; for experiments).
  static Csprng from_seed(std::uint64_t seed);

  /// A key for a child generator (another process's, a trial's), derived from this
  /// generator's key and a label: HMAC-SHA256(key, label || index). Knowing the child key does
  /// not reveal this key.
  Key derive_key(std::string_view label, std::uint64_t index) const;
  const Key& key() const { return key_; }

  /// A uniform 64-bit word.
  std::uint64_t next_u64() {
    if (rekey_on_fork_ && forks_ != detail::forks.load(std::memory_order_relaxed)) rekey_after_fork();
    if (pos_ == kWords) refill();
    return buf_[pos_++];
  }
  /// A uniform bit.
  unsigned next_bit() {
    if (rekey_on_fork_ && forks_ != detail::forks.load(std::memory_order_relaxed)) rekey_after_fork();
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
  void start(std::uint64_t block);
  void rekey_after_fork();
  bool rekey_on_fork_ = false;  // keyed from entropy: a forked child re-keys (see the class comment)
  std::uint32_t forks_ = 0;     // detail::forks when this key was drawn
  Key key_;
  std::uint64_t stream_ = 0;
  std::uint32_t epoch_ = 0;
  std::uint64_t blocks_ = 0;  // blocks of this epoch already produced
  void* ctx_ = nullptr;       // EVP_CIPHER_CTX (OpenSSL), created on the first refill
  std::array<std::uint64_t, kWords> buf_{};
  int pos_ = kWords;
  std::uint64_t bits_ = 0;
  int bits_left_ = 0;
};

}  // namespace hsdp::random
