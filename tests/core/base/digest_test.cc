// Digests (core/base/digest.h): of bytes, and of a stream of pieces.
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "core/base/digest.h"

namespace flatcheck {
namespace {

TEST(DigestTest, DigestsTellApartEveryOneBitChangeAndEveryLength) {
  std::string base(100, '\0');
  for (size_t i = 0; i < base.size(); ++i) base[i] = static_cast<char>(i * 37 + 11);
  std::set<std::pair<uint64_t, uint64_t>> seen;
  auto add = [&](std::string_view s) {
    Digest d = digest_bytes(s);
    return seen.emplace(d.lo, d.hi).second;
  };
  EXPECT_TRUE(add(base));
  for (size_t bit = 0; bit < base.size() * 8; ++bit) {
    std::string flipped = base;
    flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
    EXPECT_TRUE(add(flipped)) << "bit " << bit;
  }
  // Zero bytes pad the last word, so the length must count: "", "\0", "\0\0", ... differ.
  for (size_t n = 0; n <= 17; ++n) EXPECT_TRUE(add(std::string(n, '\0'))) << n << " zero bytes";
}

// The values campaigns depend on (a swap candidate is picked by a saved program's digest): a
// change to the function changes which candidate every case tries.
TEST(DigestTest, BytesDigestIsStable) {
  EXPECT_EQ(digest_bytes("").lo, 0x3bef86e77dc461ecu);
  EXPECT_EQ(digest_bytes("flatcheck").lo, 0x2751e99952cc96fbu);
}

// Strings are delimited: one string or two, split differently, padded with zeros or not.
TEST(DigestTest, StreamPiecesAreDelimited) {
  using Feed = std::function<void(DigestStream&)>;
  std::vector<Feed> feeds{
      [](DigestStream&) {},
      [](DigestStream& d) { d.str(""); },
      [](DigestStream& d) { d.str("ab"); },
      [](DigestStream& d) { d.str("a"), d.str("b"); },
      [](DigestStream& d) { d.str("ab"), d.str(""); },
      [](DigestStream& d) { d.str(std::string(8, 'x')); },
      [](DigestStream& d) { d.str(std::string(9, 'x')); },
      [](DigestStream& d) { d.str(std::string(8, 'x')), d.str("x"); },
      [](DigestStream& d) { d.word(7); },
      [](DigestStream& d) { d.word(7), d.word(7); },
      [](DigestStream& d) { d.word(8); },
      [](DigestStream& d) { d.tag('a'); },
      [](DigestStream& d) { d.tag('b'); },
      [](DigestStream& d) { d.str(std::string("\0", 1)); },
  };
  std::set<std::pair<uint64_t, uint64_t>> seen;
  for (size_t i = 0; i < feeds.size(); ++i) {
    DigestStream d;
    feeds[i](d);
    Digest got = d.take();
    EXPECT_TRUE(seen.emplace(got.lo, got.hi).second) << "feed " << i;
    DigestStream again;
    feeds[i](again);
    EXPECT_EQ(again.take(), got) << "feed " << i;
  }
}

}  // namespace
}  // namespace flatcheck
