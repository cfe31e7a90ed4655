// A random JSON value for property tests (rapidcheck): strings around the canonical width
// with characters that need escapes, integers of both signs past 32 bits, floats, nested
// arrays and objects with a few keys (one of them empty, one non-ASCII), and arrays whose
// one-line form is right at the width where the canonical layout breaks lines.
#pragma once

#include <rapidcheck.h>

#include <cmath>
#include <string>

#include "core/serialize/serialize.h"

namespace flatcheck {

inline Json random_json(int depth) {
  int kind = *rc::gen::inRange(0, depth > 0 ? 9 : 5);
  switch (kind) {
    case 8: {
      // An array whose one-line form is 96 to 105 characters long: 2 + sum(len + 2) + 2(n - 1).
      int n = *rc::gen::inRange(1, 5);
      int target = *rc::gen::inRange(96, 106);
      int left = target - 2 - 4 * n + 2;
      Json a = Json::array();
      for (int i = 0; i < n; ++i) {
        int len = i + 1 < n ? *rc::gen::inRange(0, left / (n - i) + 1) : left;
        a.push_back(std::string(static_cast<size_t>(len), 'b'));
        left -= len;
      }
      return a;
    }
    case 0: {
      // Strings of every length around the width, with characters that need escapes.
      auto len = *rc::gen::inRange<size_t>(0, 110);
      std::string s;
      for (size_t i = 0; i < len; ++i)
        s += *rc::gen::weightedElement<char>(
            {{20, 'a'}, {1, '"'}, {1, '\\'}, {1, '\n'}, {1, '\x01'}, {1, ' '}, {1, '\x7f'}});
      return s;
    }
    case 1:
      return *rc::gen::arbitrary<int64_t>();
    case 2:
      return *rc::gen::arbitrary<bool>();
    case 3: {
      auto f = *rc::gen::arbitrary<float>();
      return std::isfinite(f) ? Json(static_cast<double>(f)) : Json(0.25);
    }
    case 4:
      return *rc::gen::arbitrary<uint64_t>();
    case 5:
    case 6: {
      Json a = Json::array();
      for (int n = *rc::gen::inRange(0, 12); n > 0; --n) a.push_back(random_json(depth - 1));
      return a;
    }
    default: {
      Json o = Json::object();
      for (int n = *rc::gen::inRange(0, 8); n > 0; --n)
        o[*rc::gen::element<std::string>("a", "b", "ab", "node", "x_1", "\xc3\xa9", "")] =
            random_json(depth - 1);
      return o;
    }
  }
}

}  // namespace flatcheck
