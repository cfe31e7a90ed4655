// Hostile text in documents: every string a document holds is printed somewhere (`show`, error
// messages, reports, DOT graphs), so the loader refuses control characters (C0, DEL, C1) in all
// of them but a case's free-text note, and state names and module FQNs used as object keys must
// be dotted paths of legal names (docs/hardening.md). Each class is checked over every string of
// several valid documents (a module, three programs, two cases), not over one field.
#include <gtest/gtest.h>

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/base/check.h"
#include "core/passes/passes.h"
#include "core/serialize/serialize.h"
#include "generators/case.h"
#include "harness/dot.h"

namespace flatcheck {
namespace {

const char* const kDocuments[] = {
    "corpus/fuzz-seeds/loader/module-quickstart.json",
    "corpus/fuzz-seeds/loader/program-graph-break-flattened.json",
    "corpus/fuzz-seeds/loader/program-unflatten-exported.json",
    "corpus/regression/seed-quickstart.json",
    "corpus/regression/fault-container-order-outputs.json",
    // The exported program of that case: the one document here with state names as keys.
    "exported:corpus/regression/fault-container-order-outputs.json",
};

// C0 (ESC, BEL, NUL, newline, tab), DEL and C1 (CSI, NEL) controls, in turn.
std::string control(size_t i) {
  switch (i % 8) {
    case 0:
      return "\x1b[2J";
    case 1:
      return "\x07";
    case 2:
      return std::string(1, '\0');
    case 3:
      return "\n";
    case 4:
      return "\t";
    case 5:
      return "\x7f";
    case 6:
      return "\xc2\x9b";
    default:
      return "\xc2\x85";
  }
}

// A key as a JSON pointer step in an error message (a NUL is spelled "\x00" there).
std::string escape(const std::string& key) {
  std::string out;
  for (char c : key)
    out += c == '~' ? "~0" : c == '/' ? "~1" : c == '\0' ? "\\x00" : std::string(1, c);
  return out;
}

// Loads `text` as the kind its header names; returns the error, or "" when it loads.
std::string load_error(const std::string& text) {
  try {
    std::string kind = document_format(parse_doc(text, default_load_limits()).root());
    if (kind == "flatcheck-case")
      load_case(text);
    else if (kind == "flatcheck-program")
      load_program(text);
    else
      load_module(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// JSON pointers of every string value (engine blobs left out: changing one breaks its checksum
// first) and of every key of the objects that map names or paths to things (`keyed`).
void strings_of(const Json& j, const std::string& path, std::vector<std::string>& values,
                std::vector<std::string>& keys, bool keyed) {
  if (j.is_string()) {
    values.push_back(path);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i)
      strings_of(j[i], path + "/" + std::to_string(i), values, keys, false);
  } else if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      std::string p = path + "/" + escape(k);
      if (keyed) keys.push_back(p);
      bool named = k == "state" || k == "module_types" || k == "params" || k == "buffers" ||
                   k == "children" || k == "engines";
      if (k != "blob") strings_of(v, p, values, keys, named);
    }
  }
}

Json load_json(const std::string& file) {
  if (file.rfind("exported:", 0) == 0) {
    Case c = load_case_file(std::string(FLATCHECK_SOURCE_DIR) + "/" + file.substr(9));
    Json doc = Json::parse(save_program(export_program(*c.module)));
    EXPECT_GE(doc["state"].size(), 2u) << file;
    return doc;
  }
  return Json::parse(read_file(std::string(FLATCHECK_SOURCE_DIR) + "/" + file));
}

std::string parent_of(const std::string& ptr) {
  return ptr.substr(0, ptr.rfind('/'));
}

std::string last_of(const std::string& ptr) {
  return Json::json_pointer(ptr).back();
}

TEST(HostileStringsTest, AControlCharacterInAnyStringIsRefusedAtItsPath) {
  size_t checked = 0, i = 0;
  for (const char* file : kDocuments) {
    Json doc = load_json(file);
    ASSERT_EQ(load_error(doc.dump()), "") << file;
    std::vector<std::string> values, keys;
    strings_of(doc, "", values, keys, false);
    for (const std::string& ptr : values) {
      if (ptr == "/note") continue;  // free text: checked below
      for (bool in_middle : {false, true}) {
        Json d = doc;
        std::string s = d[Json::json_pointer(ptr)].get<std::string>();
        std::string c = control(i++);
        d[Json::json_pointer(ptr)] =
            in_middle ? s.substr(0, s.size() / 2) + c + s.substr(s.size() / 2) : s + c;
        std::string err = load_error(d.dump());
        EXPECT_EQ(err.rfind(ptr + ":", 0), 0u)
            << file << ": control " << Json(c).dump() << " in " << ptr << ": " << err;
        ++checked;
      }
    }
  }
  std::cout << checked << " documents, each with a control character in one string\n";
  EXPECT_GE(checked, 300u);
}

TEST(HostileStringsTest, AKeyThatIsNoLegalNameOrPathIsRefusedAtItsPath) {
  size_t checked = 0, i = 0;
  for (const char* file : kDocuments) {
    Json doc = load_json(file);
    std::vector<std::string> values, keys;
    strings_of(doc, "", values, keys, false);
    for (const std::string& ptr : keys) {
      std::string c = control(i++);
      for (const std::string& bad :
           {last_of(ptr) + c, "." + last_of(ptr), last_of(ptr) + ".", std::string("a..b"),
            std::string(), std::string("a@1.b"), std::string("a b"), std::string("a.b-c")}) {
        Json d = doc;
        Json& obj = d[Json::json_pointer(parent_of(ptr))];
        Json v = obj[last_of(ptr)];
        obj.erase(last_of(ptr));
        obj[bad] = v;
        std::string want = parent_of(ptr) + "/" + escape(bad) + ":";
        std::string err = load_error(d.dump());
        EXPECT_EQ(err.rfind(want, 0), 0u) << file << ": key " << Json(bad).dump() << ": " << err;
        ++checked;
      }
    }
  }
  std::cout << checked << " documents, each with one bad key\n";
  EXPECT_GE(checked, 100u);
}

TEST(HostileStringsTest, ANoteMayHoldLineBreaksAndTabsButNoOtherControl) {
  Json doc = load_json("corpus/regression/seed-quickstart.json");
  for (const char* note : {"line one\nline two", "a\ttab", "crlf\r\n", "plain"}) {
    doc["note"] = note;
    EXPECT_EQ(load_error(doc.dump()), "") << Json(note).dump();
    EXPECT_EQ(load_case(doc.dump()).note, note);
  }
  for (const char* note : {"\x1b[2J", "bell\x07", "del\x7f", "csi\xc2\x9b", "nel\xc2\x85"}) {
    doc["note"] = note;
    EXPECT_EQ(load_error(doc.dump()).rfind("/note:", 0), 0u) << Json(note).dump();
  }
}

// What DOT reads as the text of a quoted string at `at` (graphviz: `\"` is a quote, `\\` a
// backslash); npos for `end` when the string never closes.
std::string dot_string(const std::string& text, size_t at, size_t& end) {
  std::string out;
  for (size_t i = at + 1; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && (text[i + 1] == '"' || text[i + 1] == '\\')) {
      out += text[++i];
    } else if (text[i] == '"') {
      end = i;
      return out;
    } else {
      out += text[i];
    }
  }
  end = std::string::npos;
  return out;
}

TEST(HostileStringsTest, DotLabelsKeepQuotesAndBackslashesInsideTheirString) {
  for (const std::string& type : {std::string("T\\"), std::string("T\\\"];x[label=\""),
                                  std::string("\"q\""), std::string("a\\\\b\\")}) {
    Module m;
    m.type = type;
    m.graph.output({});
    std::ostringstream os;
    write_dot(os, m, "title\\");
    std::string text = os.str();
    size_t label = text.find("label=", text.find("subgraph"));
    ASSERT_NE(label, std::string::npos) << text;
    size_t end = 0;
    EXPECT_EQ(dot_string(text, label + 6, end), "<root> : " + type) << text;
    ASSERT_NE(end, std::string::npos) << text;
    EXPECT_EQ(text[end + 1], ';') << text;
    size_t title_end = 0;
    EXPECT_EQ(dot_string(text, text.find("label=") + 6, title_end), "title\\") << text;
  }
}

}  // namespace
}  // namespace flatcheck
