// Values the generator draws (generators/values.h).
#include "generators/values.h"

#include <array>

#include "core/base/names.h"

namespace flatcheck {

float draw_value(Source& src, bool special) {
  if (special && src.chance(1, 6)) return special_value(src);
  // Multiples of 1/8 in [-4, 4], plus an odd fraction now and then.
  float v = static_cast<float>(src.range(-32, 32)) / 8.0f;
  if (src.chance(1, 4)) v += static_cast<float>(src.range(1, 999)) / 1000.0f;
  return v;
}

float special_value(Source& src) {
  static const std::array<uint32_t, 10> kSpecial = {0x80000000u /* -0.0 */,
                                                    0x7f800000u /* inf */,
                                                    0xff800000u /* -inf */,
                                                    0x7fc00000u /* NaN */,
                                                    0x7fc12345u /* NaN payload */,
                                                    0xffc00001u /* -NaN payload */,
                                                    0x00000001u /* smallest subnormal */,
                                                    0x807fffffu /* largest negative subnormal */,
                                                    0x7f7fffffu /* max */,
                                                    0x00800000u /* smallest normal */};
  return bits_float(kSpecial[src.below(kSpecial.size())]);
}

namespace {

// Names that collide with what the passes mint: getitems, op names, export's p_*/b_* state
// placeholders, partition's children.
const std::array<const char*, 15> kConfusingNames = {
    "getitem",       "getitem_1",     "relu",           "x",        "add", "mul_1",
    "_run_on_acc_0", "_run_on_gpu_1", "execute_engine", "output_1", "p_w", "b_buf",
    "p_layer0_w",    "b_layer0_buf",  "layer0"};

// Pairs of paths that mangle alike: a.b_c / a_b.c, a.buf / a_buf, a.w / a_w.
const std::array<const char*, 6> kMangledNames = {"a", "a_b", "b", "b_c", "a_w", "a_buf"};

// Sibling names one of which is a prefix of another, across the separators lookups split on.
const std::array<const char*, 10> kPrefixedNames = {
    "layer1", "layer10", "layer", "layer1_0", "a", "a_b", "ab", "layer11", "a1", "layer_1"};

// Names that collide once torch.export lower-cases them (Layer / layer / LAYER) or torch.fx
// snake-cases them (convBlock / conv_block / ConvBlock), beside ones that do not.
const std::array<const char*, 8> kCasedNames = {"Layer",      "layer",     "LAYER",  "convBlock",
                                                "conv_block", "ConvBlock", "Block1", "block1"};

// Python builtins (never node names: torch.fx suffixes them) that are also valid nn.Module
// attribute names, and suffixed forms that a renamed builtin then has to skip.
const std::array<const char*, 12> kReservedNames = {"sum",    "sum_1", "input", "input_1",
                                                    "max",    "max_2", "abs",   "list",
                                                    "list_1", "min",   "id",    "abs_1"};

}  // namespace

std::string name_hint(Source& src, NamingPolicy policy, std::string_view natural,
                      const std::vector<std::string>& siblings) {
  switch (policy) {
    case NamingPolicy::kNatural:
      return std::string(natural);
    case NamingPolicy::kGetitem:
      if (src.chance(1, 2))
        return src.chance(1, 2) ? "getitem" : "getitem_" + std::to_string(src.range(1, 4));
      return std::string(natural);
    case NamingPolicy::kConfusing:
      if (src.chance(1, 2)) return kConfusingNames[src.below(kConfusingNames.size())];
      if (!siblings.empty() && src.chance(1, 3)) return siblings[src.below(siblings.size())];
      return std::string(natural);
  }
  return std::string(natural);
}

std::string child_name_hint(Source& src, ChildNaming naming, size_t index) {
  switch (naming) {
    case ChildNaming::kLayers:
      return src.chance(1, 4) ? "n" : "layer" + std::to_string(index);
    case ChildNaming::kNumeric:
      return std::to_string(index);
    case ChildNaming::kMangled:
      return kMangledNames[src.below(kMangledNames.size())];
    case ChildNaming::kPrefixed:
      return kPrefixedNames[src.below(kPrefixedNames.size())];
    case ChildNaming::kCased:
      return kCasedNames[src.below(kCasedNames.size())];
  }
  return "layer" + std::to_string(index);
}

std::string reserved_name_hint(Source& src) {
  return kReservedNames[src.below(kReservedNames.size())];
}

std::string param_name_hint(Source& src, ChildNaming naming, size_t count) {
  static const std::array<const char*, 4> kMangledParams = {"a_w", "b_w", "c_w", "a_b_w"};
  static const std::array<const char*, 4> kCasedParams = {"W", "w", "Weight", "weight"};
  if (naming == ChildNaming::kMangled && src.chance(3, 4))
    return kMangledParams[src.below(kMangledParams.size())];
  if (naming == ChildNaming::kCased && src.chance(3, 4))
    return kCasedParams[src.below(kCasedParams.size())];
  return "w" + (count == 0 ? std::string() : "_" + std::to_string(count));
}

std::string buffer_name_hint(Source& src, ChildNaming naming) {
  static const std::array<const char*, 3> kMangledBufs = {"buf", "a_buf", "b_buf"};
  static const std::array<const char*, 3> kCasedBufs = {"buf", "Buf", "runMean"};
  if (naming == ChildNaming::kMangled) return kMangledBufs[src.below(kMangledBufs.size())];
  if (naming == ChildNaming::kCased) return kCasedBufs[src.below(kCasedBufs.size())];
  return "buf";
}

Tensor draw_tensor(Source& src, const Shape& shape, bool special) {
  Tensor t = Tensor::zeros(shape);
  for (auto& x : t.data) x = draw_value(src, special);
  return t;
}

}  // namespace flatcheck
