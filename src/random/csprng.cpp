#include "hsdp/random/csprng.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace hsdp::random {

namespace {

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

namespace detail {
std::atomic<std::uint32_t> forks{0};
}  // namespace detail

namespace {
// Counts the forks in the child (async-signal-safe: one relaxed atomic increment), registered
// once, before the first generator keyed from entropy exists.
void count_fork() { detail::forks.fetch_add(1, std::memory_order_relaxed); }
void watch_forks() {
  static const int registered = pthread_atfork(nullptr, nullptr, count_fork);
  if (registered != 0) throw std::runtime_error("pthread_atfork failed: a generator could repeat its draws after fork");
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
  static constexpr char kLabel[] = "hsdp seeded generator v1";
  std::uint8_t msg[sizeof kLabel - 1 + 8];
  std::memcpy(msg, kLabel, sizeof kLabel - 1);
  put_u64(msg + sizeof kLabel - 1, seed);
  Key k;
  SHA256(msg, sizeof msg, k.data());
  return k;
}

Csprng::Csprng(const Key& key, std::uint64_t stream) : key_(key), stream_(stream) {}

Csprng::~Csprng() { EVP_CIPHER_CTX_free(static_cast<EVP_CIPHER_CTX*>(ctx_)); }

Csprng::Csprng(const Csprng& o)
    : rekey_on_fork_(o.rekey_on_fork_), forks_(o.forks_), key_(o.key_), stream_(o.stream_), epoch_(o.epoch_),
      blocks_(o.blocks_), buf_(o.buf_), pos_(o.pos_), bits_(o.bits_), bits_left_(o.bits_left_) {
  // The copy continues the same stream: a new cipher context at the same position.
  if (o.ctx_) start(blocks_);
}

void Csprng::start(std::uint64_t block) {
  // RFC 7539 ChaCha20 as OpenSSL's EVP_chacha20 takes it: a 16-byte IV = 32-bit block counter
  // (little endian) and a 96-bit nonce = 32-bit epoch + 64-bit stream number. The counter
  // covers 2^32 blocks (256 GiB); the epoch moves on before it wraps.
  if (!ctx_) ctx_ = EVP_CIPHER_CTX_new();
  auto* ctx = static_cast<EVP_CIPHER_CTX*>(ctx_);
  std::uint8_t iv[16];
  const auto counter = static_cast<std::uint32_t>(block);
  for (int i = 0; i < 4; ++i) iv[i] = static_cast<std::uint8_t>(counter >> (8 * i));
  for (int i = 0; i < 4; ++i) iv[4 + i] = static_cast<std::uint8_t>(epoch_ >> (8 * i));
  put_u64(iv + 8, stream_);
  if (!ctx || EVP_EncryptInit_ex(ctx, EVP_chacha20(), nullptr, key_.data(), iv) != 1)
    throw std::runtime_error("OpenSSL ChaCha20 could not be initialised");
}

Csprng Csprng::from_entropy() {
  watch_forks();
  Csprng g(entropy_key());
  g.rekey_on_fork_ = true;
  g.forks_ = detail::forks.load(std::memory_order_relaxed);
  return g;
}

void Csprng::rekey_after_fork() {
  // In a forked child: a fresh key from the operating system, the stream from its start, and
  // nothing of the keystream buffered before the fork (the parent draws those words).
  forks_ = detail::forks.load(std::memory_order_relaxed);
  key_ = entropy_key();
  epoch_ = 0;
  blocks_ = 0;
  EVP_CIPHER_CTX_free(static_cast<EVP_CIPHER_CTX*>(ctx_));
  ctx_ = nullptr;
  pos_ = kWords;
  bits_left_ = 0;
}
Csprng Csprng::from_seed(std::uint64_t seed) { return Csprng(seed_key(seed)); }

Key Csprng::derive_key(std::string_view label, std::uint64_t index) const {
  std::string msg(label);
  std::uint8_t idx[8];
  put_u64(idx, index);
  msg.append(reinterpret_cast<const char*>(idx), 8);
  Key k;
  unsigned int size = 0;
  if (!HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
            reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), k.data(), &size) ||
      size != k.size())
    throw std::runtime_error("HMAC-SHA256 failed");
  return k;
}

void Csprng::refill() {
  constexpr std::uint64_t kBlocks = sizeof buf_ / 64;
  if (!ctx_ || blocks_ + kBlocks > (std::uint64_t{1} << 32)) {
    if (ctx_ && blocks_ + kBlocks > (std::uint64_t{1} << 32)) {
      ++epoch_;
      blocks_ = 0;
    }
    start(blocks_);
  }
  auto* bytes = reinterpret_cast<unsigned char*>(buf_.data());
  std::memset(bytes, 0, sizeof buf_);
  int out = 0;
  // The keystream, XORed onto zeros in place.
  if (EVP_EncryptUpdate(static_cast<EVP_CIPHER_CTX*>(ctx_), bytes, &out, bytes, static_cast<int>(sizeof buf_)) != 1 ||
      out != static_cast<int>(sizeof buf_))
    throw std::runtime_error("OpenSSL ChaCha20 failed");
  blocks_ += kBlocks;
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
