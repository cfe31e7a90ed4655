// The JSON format: canonical round trips (a property over random module trees), exact special
// floats, and malformed documents rejected with a message naming the JSON path.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <functional>

#include <nlohmann/json.hpp>

#include "core/base/check.h"
#include "core/base/faults.h"
#include "core/passes/passes.h"
#include "core/runtime/interpreter.h"
#include "core/serialize/fields.h"
#include "core/serialize/json_doc.h"
#include "core/serialize/serialize.h"
#include "generators/examples.h"
#include "generators/rc_gen.h"
#include "tests/support/programs.h"

namespace flatcheck {
namespace {

std::vector<Tensor> run_fresh(const Module& m, const std::vector<Tensor>& in) {
  auto copy = clone_module(m, false);
  return run_module(*copy, in);
}

RC_GTEST_PROP(SerializeProperty, SaveLoadSaveIsByteIdenticalAndRunsTheSame, (const Recipe& r)) {
  Case c = build_recipe(r);
  std::string s = save_module(*c.module);
  auto reloaded = load_module(s);
  RC_ASSERT(save_module(*reloaded) == s);
  auto want = run_fresh(*c.module, c.inputs);
  auto got = run_fresh(*reloaded, c.inputs);
  RC_ASSERT(want.size() == got.size());
  for (size_t i = 0; i < want.size(); ++i) RC_ASSERT(want[i].bit_equal(got[i]));
}

RC_GTEST_PROP(SerializeProperty, ProgramsRoundTripWithEngines, (const Recipe& r)) {
  Case c = build_recipe(r);
  Program ep = export_program(*c.module);
  PartitionOptions po = partition_options(c.config);
  for (const Program& p : {ep, partition(ep, po), flatten(partition(ep, po))}) {
    std::string s = save_program(p);
    RC_ASSERT(save_program(load_program(s)) == s);
  }
}

// JSON pointers in error messages: keys escape '~' and '/' (RFC 6901), indexes are decimal,
// and a path is text only when asked for, through its chain of steps.
TEST(SerializeTest, ErrorPathsAreJsonPointers) {
  const JsonPath a = "/a", doc = "", escaped = "/a/b~1c";
  EXPECT_EQ(serial::key_path(a, "b").str(), "/a/b");
  EXPECT_EQ(serial::key_path(doc, "b/c~d").str(), "/b~1c~0d");
  EXPECT_EQ(serial::key_path(a, "").str(), "/a/");
  EXPECT_EQ(serial::idx_path(a, 0).str(), "/a/0");
  EXPECT_EQ(serial::idx_path(escaped, 18446744073709551615u).str(), "/a/b~1c/18446744073709551615");
  const JsonPath nodes = serial::key_path(a, "nodes"), third = serial::idx_path(nodes, 3);
  EXPECT_EQ(serial::key_path(third, "x~/y").str(), "/a/nodes/3/x~0~1y");
  EXPECT_TRUE(doc.empty());
  EXPECT_FALSE(a.empty());
  EXPECT_FALSE(serial::key_path(doc, "").empty());
  try {
    serial::fail(doc, "bad");
    ADD_FAILURE() << "fail() returned";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "/: bad");
  }
}

// A state path longer than max_path_length is refused by the path check, however legal each of
// its names is: one state entry's key made 1,025 characters of "a.a.a...".
TEST(SerializeTest, AStatePathOverTheLengthLimitIsRefused) {
  auto doc = nlohmann::json::parse(save_program(export_program(*quickstart_example())));
  auto& state = doc.at("state");
  ASSERT_FALSE(state.empty());
  std::string long_key = "a";
  while (long_key.size() < 1025) long_key += ".a";
  auto first = state.begin();
  state[long_key] = first.value();
  state.erase(first.key());
  try {
    load_program(doc.dump());
    FAIL() << "a state path of " << long_key.size() << " characters loaded";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("is not a legal path (letters, digits and '_' joined by "
                                         "'.', at most 1024 characters)"),
              std::string::npos)
        << e.what();
  }
}

// A program document holds its own keys only: a key it does not have, at the top or in the
// signature, is refused at that key's path (each object of the document checks its keys; the
// top's check was once dropped by a source mutant and nothing noticed).
TEST(SerializeTest, AProgramWithAnUnknownKeyIsRefused) {
  const auto doc = nlohmann::json::parse(save_program(export_program(*quickstart_example())));
  ASSERT_NO_THROW(load_program(doc.dump()));
  for (const char* where : {"", "signature", "module"}) {
    for (const char* key : {"extra", "Module", "states"}) {
      auto bad = doc;
      (*where ? bad.at(where) : bad)[key] = 1;
      std::string path = (*where ? "/" + std::string(where) : std::string()) + "/" + key;
      try {
        load_program(bad.dump());
        ADD_FAILURE() << "a program with the key " << path << " loaded";
      } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()).rfind(path + ": unknown key", 0), 0u) << e.what();
      }
    }
  }
}

TEST(SerializeTest, SpecialFloatsSurviveBitForBit) {
  const std::vector<uint32_t> bits = {0x80000000u, 0x7fc12345u, 0xffc00001u, 0x7f800000u,
                                      0xff800000u, 0x00000001u, 0x807fffffu, 0x7f7fffffu};
  std::vector<float> v;
  for (uint32_t b : bits) v.push_back(bits_float(b));
  Module m;
  m.params["w"] = std::make_shared<Tensor>(Tensor({8}, v));
  Node* x = m.graph.placeholder("x", ValueType::tensor({8}));
  Node* wn = m.graph.get_attr("w");
  m.graph.output({m.graph.call_function(OpCode::kAdd, {x, wn})});
  std::string s = save_module(m);
  auto back = load_module(s);
  const Tensor& w = *back->params.at("w");
  ASSERT_EQ(w.data.size(), bits.size());
  for (size_t i = 0; i < bits.size(); ++i) EXPECT_EQ(float_bits(w.data[i]), bits[i]) << i;
}

// The planted fault serialize-float-short (docs/faults.md) writes each tensor value as decimal
// text of 6 significant digits, which loads back rounded, without an error: a wrong value the
// reload stage must find, not a writer that throws.
TEST(SerializeTest, TheFloatShortFaultWritesValuesThatLoadBackRounded) {
  Module m;
  m.params["w"] = std::make_shared<Tensor>(Tensor({3}, {1.0f / 3, 2.5f, -INFINITY}));
  Node* x = m.graph.placeholder("x", ValueType::tensor({3}));
  m.graph.output({m.graph.call_function(OpCode::kAdd, {x, m.graph.get_attr("w")})});
  std::string s;
  {
    ScopedFault f(Fault::kSerializeFloatShort);
    ASSERT_NO_THROW(s = save_module(m));
  }
  EXPECT_NE(s.find("\"values\""), std::string::npos) << s;
  auto back = load_module(s);
  const Tensor& w = *back->params.at("w");
  ASSERT_EQ(w.data.size(), 3u);
  EXPECT_EQ(w.data[0], 0.333333f);
  EXPECT_NE(w.data[0], 1.0f / 3);
  EXPECT_EQ(w.data[1], 2.5f);
  EXPECT_EQ(w.data[2], -INFINITY);
}

TEST(SerializeTest, ScalarConstantsKeepNonFiniteValues) {
  Module m;
  Node* x = m.graph.placeholder("x", ValueType::tensor({1}));
  Node* a = m.graph.call_function(OpCode::kAddScalar, {x, bits_float(0x7fc00042u)});
  Node* b = m.graph.call_function(OpCode::kMulScalar, {a, -INFINITY});
  Node* c = m.graph.call_function(OpCode::kMulScalar, {b, -0.0f});
  m.graph.output({c});
  std::string s = save_module(m);
  auto back = load_module(s);
  EXPECT_EQ(float_bits(std::get<float>(back->graph.find("add_scalar")->args[1])), 0x7fc00042u);
  EXPECT_EQ(std::get<float>(back->graph.find("mul_scalar")->args[1]), -INFINITY);
  EXPECT_EQ(float_bits(std::get<float>(back->graph.find("mul_scalar_1")->args[1])), 0x80000000u);
  EXPECT_EQ(save_module(*back), s);
}

// "nan:0x..." spells a NaN and nothing else: bits of a number, an infinity or zero, and texts
// that are not eight hex digits, are refused with the constant's path.
TEST(SerializeTest, ANanSpellingOfBitsThatAreNotANanIsRefused) {
  auto doc = [](const std::string& spelling) {
    return R"({"format": "flatcheck-module", "version": 1, "module": {"type": "M", "graph": {"nodes": [)"
           R"({"name": "x", "op": "placeholder", "target": "x", "val": {"kind": "tensor", "shape": [1]}},)"
           R"({"name": "a", "op": "call_function", "target": "add_scalar", "args": ["x", {"float": ")" +
           spelling +
           R"("}]},)"
           R"({"name": "output", "op": "output", "target": "output", "args": ["a"]}]}}})";
  };
  for (const char* ok : {"nan:0x7fc00000", "nan:0xffc00001", "nan:0x7f800001", "nan:0xFFFFFFFF"}) {
    auto m = load_module(doc(ok));
    float f = std::get<float>(m->graph.find("a")->args[1]);
    EXPECT_TRUE(std::isnan(f)) << ok;
    EXPECT_EQ(float_bits(f),
              static_cast<uint32_t>(std::stoul(std::string(ok).substr(6), nullptr, 16)))
        << ok;
  }
  for (const char* bad : {"nan:0x3f800000", "nan:0x00000000", "nan:0x7f800000", "nan:0xff800000",
                          "nan:0x80000000", "nan:0x7fc0000g", "nan:0x7fc000", "nan:0x7fc0000001"}) {
    try {
      load_module(doc(bad));
      ADD_FAILURE() << bad << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("/module/graph/nodes/1/args/1/float"), std::string::npos)
          << bad << ": " << e.what();
    }
  }
}

TEST(SerializeTest, TensorValuesMayBeWrittenAsNumbers) {
  std::string s = R"({"format": "flatcheck-module", "version": 1, "module": {"type": "M",
    "params": {"w": {"dtype": "float32", "shape": [2], "values": [1.5, -2]}},
    "graph": {"nodes": [
      {"name": "x", "op": "placeholder", "target": "x", "val": {"kind": "tensor", "shape": [2]}},
      {"name": "w", "op": "get_attr", "target": "w", "args": []},
      {"name": "mul", "op": "call_function", "target": "mul", "args": ["x", "w"]},
      {"name": "output", "op": "output", "target": "output", "args": ["mul"]}]}}})";
  auto m = load_module(s);
  EXPECT_EQ(m->params.at("w")->data, (std::vector<float>{1.5f, -2.0f}));
  auto out = run_module(*m, std::vector<Tensor>{Tensor({2}, {2, 3})});
  EXPECT_EQ(out[0].data, (std::vector<float>{3, -6}));
}

// --------------------------------------------------------------------- malformed documents

struct Malformed {
  const char* what;
  std::string doc;
  const char* path;  // the JSON path the message must name
};

std::string module_doc(const std::string& nodes, const std::string& extra = "") {
  return R"({"format": "flatcheck-module", "version": 1, "module": {"type": "M", )" + extra +
         R"("graph": {"nodes": [)" + nodes + "]}}}";
}

const std::string kX =
    R"({"name": "x", "op": "placeholder", "target": "x", "val": {"kind": "tensor", "shape": [2]}})";
const std::string kOut = R"({"name": "output", "op": "output", "target": "output", "args": ["x"]})";

std::vector<Malformed> malformed_documents() {
  std::string deep(200, '[');
  return {
      {"not JSON", "{\"format\": ", "/"},
      {"truncated", module_doc(kX + "," + kOut).substr(0, 80), "/"},
      {"wrong format", R"({"format": "other", "version": 1})", "/format"},
      {"future version", R"({"format": "flatcheck-module", "version": 99, "module": {}})",
       "/version"},
      {"module not an object", R"({"format": "flatcheck-module", "version": 1, "module": []})",
       "/module"},
      {"unknown key", module_doc(kX + "," + kOut, R"("colour": 1, )"), "/module/colour"},
      {"nodes not an array",
       R"({"format": "flatcheck-module", "version": 1, "module": {"type": "M", "graph": {"nodes": 3}}})",
       "/module/graph/nodes"},
      {"unknown node op", module_doc(R"({"name": "x", "op": "jump", "target": "x"})"),
       "/module/graph/nodes/0/op"},
      {"unknown function",
       module_doc(
           kX + R"(, {"name": "f", "op": "call_function", "target": "frobnicate", "args": ["x"]})" +
           "," + kOut),
       "/module/graph/nodes/1/target"},
      {"dangling reference",
       module_doc(kX +
                  R"(, {"name": "r", "op": "call_function", "target": "relu", "args": ["nope"]})" +
                  "," + kOut),
       "/module/graph/nodes/1/args/0"},
      {"forward reference",
       module_doc(
           kX +
           R"(, {"name": "r", "op": "call_function", "target": "relu", "args": ["s"]}, {"name": "s", "op": "call_function", "target": "relu", "args": ["x"]})" +
           "," + kOut),
       "/module/graph/nodes/1/args/0"},
      {"self reference (cycle)",
       module_doc(kX +
                  R"(, {"name": "r", "op": "call_function", "target": "relu", "args": ["r"]})" +
                  "," + kOut),
       "/module/graph/nodes/1/args/0"},
      {"duplicate names", module_doc(kX + "," + kX + "," + kOut), "/module/graph/nodes/1/name"},
      {"illegal name",
       module_doc(
           R"({"name": "a b", "op": "placeholder", "target": "x", "val": {"kind": "tensor", "shape": [2]}})"),
       "/module/graph/nodes/0/name"},
      {"wrong arity",
       module_doc(kX + R"(, {"name": "a", "op": "call_function", "target": "add", "args": ["x"]})" +
                  "," + kOut),
       "/module/graph"},
      {"wrong argument type",
       module_doc(
           kX + R"(, {"name": "a", "op": "call_function", "target": "relu", "args": [{"x": 1}]})" +
           "," + kOut),
       "/module/graph/nodes/1/args/0"},
      {"placeholder without type",
       module_doc(R"({"name": "x", "op": "placeholder", "target": "x"})"), "/module/graph/nodes/0"},
      {"negative dimension",
       module_doc(
           R"({"name": "x", "op": "placeholder", "target": "x", "val": {"kind": "tensor", "shape": [-1]}})"),
       "/module/graph/nodes/0/val/shape/0"},
      {"shape bomb",
       module_doc(
           R"({"name": "x", "op": "placeholder", "target": "x", "val": {"kind": "tensor", "shape": [100000, 100000]}})"),
       "/module/graph/nodes/0/val/shape"},
      {"element-count bomb in state",
       module_doc(kX + "," + kOut,
                  R"("params": {"w": {"dtype": "float32", "shape": [4096, 4096], "data": ""}}, )"),
       "/module/params/w/shape"},
      {"bad base64",
       module_doc(kX + "," + kOut,
                  R"("params": {"w": {"dtype": "float32", "shape": [1], "data": "!!!!"}}, )"),
       "/module/params/w/data"},
      {"short tensor data",
       module_doc(kX + "," + kOut,
                  R"("params": {"w": {"dtype": "float32", "shape": [2], "data": "AACAPw=="}}, )"),
       "/module/params/w/data"},
      {"unsupported dtype",
       module_doc(kX + "," + kOut,
                  R"("params": {"w": {"dtype": "int8", "shape": [1], "data": "AA=="}}, )"),
       "/module/params/w/dtype"},
      {"deep JSON nesting", "{\"format\": " + deep, "/"},
      {"dangling get_attr",
       module_doc(kX + R"(, {"name": "w", "op": "get_attr", "target": "w", "args": []})" + "," +
                  kOut),
       "/module/graph"},
      {"missing child",
       module_doc(kX + R"(, {"name": "c", "op": "call_module", "target": "c", "args": ["x"]})" +
                  "," + kOut),
       "/module/graph"},
      {"bad float text",
       module_doc(
           kX +
           R"(, {"name": "a", "op": "call_function", "target": "add_scalar", "args": ["x", {"float": "lots"}]})" +
           "," + kOut),
       "/module/graph/nodes/1/args/1/float"},
      {"float out of range",
       module_doc(
           kX +
           R"(, {"name": "a", "op": "call_function", "target": "add_scalar", "args": ["x", 1e300]})" +
           "," + kOut),
       "/module/graph/nodes/1/args/1"},
      {"engine checksum mismatch",
       module_doc(kX + "," + kOut,
                  R"("engines": {"e": {"blob": "e30=", "checksum": "0000000000000000"}}, )"),
       "/module/engines/e/checksum"},
      {"parameter name with a space",
       module_doc(kX + "," + kOut,
                  R"("params": {"a b": {"dtype": "float32", "shape": [1], "data": "AACAPw=="}}, )"),
       "/module/params/a b"},
      {"dotted buffer name",
       module_doc(
           kX + "," + kOut,
           R"("buffers": {"a.b": {"dtype": "float32", "shape": [1], "data": "AACAPw=="}}, )"),
       "/module/buffers/a.b"},
      {"empty parameter name",
       module_doc(kX + "," + kOut,
                  R"("params": {"": {"dtype": "float32", "shape": [1], "data": "AACAPw=="}}, )"),
       "/module/params/"},
      {"buffer name with a leading digit",
       module_doc(kX + "," + kOut,
                  R"("buffers": {"1x": {"dtype": "float32", "shape": [1], "data": "AACAPw=="}}, )"),
       "/module/buffers/1x"},
      {"alias to nothing", module_doc(kX + "," + kOut, R"("params": {"w": {"alias": "v"}}, )"),
       "/module/params/w/alias"},
      {"module alias to nothing",
       module_doc(kX + "," + kOut, R"("children": {"c": {"alias": "nowhere"}}, )"),
       "/module/children/c/alias"},
      {"module alias to a later sibling",
       module_doc(kX + "," + kOut,
                  R"("children": {"a": {"alias": "b"}, "b": {"type": "B", "graph": {"nodes": [)" +
                      kX + "," + kOut + "]}}}, "),
       "/module/children/a/alias"},
      {"output missing", module_doc(kX), "/module/graph"},
      {"node after output",
       module_doc(kX + "," + kOut +
                  R"(, {"name": "r", "op": "call_function", "target": "relu", "args": ["x"]})"),
       "/module/graph"},
      {"shape mismatch in an op",
       module_doc(
           kX +
           R"(, {"name": "m", "op": "call_function", "target": "matmul", "args": ["x", "x"]})" +
           "," + kOut),
       "/module"},
  };
}

TEST(SerializeTest, MalformedDocumentsAreRejectedWithTheirJsonPath) {
  auto docs = malformed_documents();
  ASSERT_GE(docs.size(), 20u);
  for (const auto& d : docs) {
    try {
      load_module(d.doc);
      ADD_FAILURE() << d.what << ": accepted";
    } catch (const InputError& e) {
      std::string msg = e.what();
      EXPECT_EQ(msg.rfind(d.path, 0), 0u)
          << d.what << ": message '" << msg << "' does not start with " << d.path;
    }
  }
}

// One piece of a document (an engine, a tensor) read from its own text at `path`, under the
// default limits.
template <class ReadPiece>
auto load_piece(const std::string& text, const char* path, ReadPiece read) {
  LoadBudget b{default_load_limits()};
  JsonDoc doc = parse_doc(text, b.limits);
  return read(doc.root(), path, b);
}

// A placeholder's type is a tensor, bool, int or float: each of those round-trips, and a module
// holding a placeholder of any other type (a tuple, none, an engine) is refused when saved, by
// name, rather than written as a document the loader would refuse. A document that spells a
// tuple type is refused at its path.
TEST(SerializeTest, PlaceholderTypesOutsideTheFormatAreRefusedWhenSaved) {
  auto module_with = [](const ValueType& t) {
    Module m;
    Node* x = m.graph.placeholder("x", ValueType::tensor({2}));
    m.graph.placeholder("odd", t);
    m.graph.output({m.graph.call_function(OpCode::kRelu, {x})});
    return m;
  };
  for (const ValueType& t :
       {ValueType::scalar(ValueType::kBool), ValueType::scalar(ValueType::kInt),
        ValueType::scalar(ValueType::kFloat), ValueType::tensor({3, 1})}) {
    auto back = load_module(save_module(module_with(t)));
    Node* odd = back->graph.find("odd");
    ASSERT_TRUE(odd && odd->meta.val);
    EXPECT_EQ(*odd->meta.val, t);
  }
  for (const ValueType& t : {ValueType::tuple({{2}, {3}}), ValueType::tuple({}), ValueType{},
                             ValueType::scalar(ValueType::kEngine)}) {
    try {
      save_module(module_with(t));
      ADD_FAILURE() << t << " saved";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("save: a placeholder of type"), std::string::npos)
          << e.what();
    }
  }
  std::string doc = save_module(module_with(ValueType::tensor({2})));
  std::string from = R"("val": {"kind": "tensor", "shape": [2]})";
  size_t at = doc.rfind(from);
  ASSERT_NE(at, std::string::npos) << doc;
  doc.replace(at, from.size(), R"("val": {"elems": [[2], [3]], "kind": "tuple"})");
  try {
    load_module(doc);
    ADD_FAILURE() << "a tuple type loaded";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/val"), std::string::npos) << e.what();
  }
}

// An engine blob of exactly max_blob_bytes loads; one byte over, it is refused at its path.
// The limit is set from the largest blob in the saved document, its size read from the base64
// text (three bytes per four characters, less the padding).
TEST(SerializeTest, AnEngineBlobAtTheLimitLoadsAndOneByteOverDoesNot) {
  Program pm = partition(export_program(*graph_break_example()), {{"relu"}, 5});
  std::string doc = save_program(pm);
  size_t most = 0;
  const std::string key = "\"blob\": \"";
  for (size_t at = doc.find(key); at != std::string::npos; at = doc.find(key, at + 1)) {
    size_t begin = at + key.size(), end = doc.find('"', begin);
    ASSERT_NE(end, std::string::npos);
    std::string b64 = doc.substr(begin, end - begin);
    size_t pad = 0;
    while (!b64.empty() && b64.back() == '=') b64.pop_back(), ++pad;
    most = std::max(most, (b64.size() + pad) / 4 * 3 - pad);
  }
  ASSERT_GT(most, 0u) << doc;
  LoadLimits lim = default_load_limits();
  lim.max_blob_bytes = most;
  EXPECT_NO_THROW(load_program(doc, lim));
  lim.max_blob_bytes = most - 1;
  try {
    load_program(doc, lim);
    ADD_FAILURE() << "a blob of " << most << " bytes loaded under a limit of " << most - 1;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/blob: " + std::to_string(most) +
                                         " bytes, over the limit of " + std::to_string(most - 1)),
              std::string::npos)
        << e.what();
  }
}

// An engine binding holds its own keys only: a key it does not have, in an input binding (name,
// slot, position) or an output binding (name, slot), is refused at that key's path. The engine
// is the graph-break program's first, written as its blob's JSON holds it.
TEST(SerializeTest, AnEngineBindingWithAnUnknownKeyIsRefused) {
  Program pm = partition(export_program(*graph_break_example()), {{"relu"}, 5});
  std::shared_ptr<const Engine> engine;
  for (const auto& [name, child] : pm.root->children)
    for (const auto& [_, e] : child->engines)
      if (!engine) engine = e;
  ASSERT_TRUE(engine);
  JsonWriter w;
  write_engine(w, *engine);
  std::string text = w.take();
  auto load = [](const std::string& t) { return load_piece(t, "/engine", engine_from_json); };
  ASSERT_NO_THROW(load(text));
  for (const char* list : {"inputs", "outputs"}) {
    size_t at = text.find("\"" + std::string(list) + "\": [");
    ASSERT_NE(at, std::string::npos) << list << " in " << text;
    size_t open = text.find('{', at);
    ASSERT_NE(open, std::string::npos);
    std::string bad = text;
    bad.insert(open + 1, "\"extra\": 1, ");
    try {
      load(bad);
      ADD_FAILURE() << "a binding in " << list << " with an extra key loaded";
    } catch (const InputError& e) {
      EXPECT_NE(
          std::string(e.what()).find("/engine/" + std::string(list) + "/0/extra: unknown key"),
          std::string::npos)
          << e.what();
    }
  }
}

// A tensor holds its own keys only (dtype, shape, and data or values): written either way it
// loads, and with a key it does not have it is refused at that key's path.
TEST(SerializeTest, ATensorWithAnUnknownKeyIsRefused) {
  auto load = [](const std::string& text) { return load_piece(text, "/t", tensor_from_json); };
  const std::string by_values = R"({"dtype": "float32", "shape": [2], "values": [1.5, -2]})";
  EXPECT_EQ(load(by_values).data, (std::vector<float>{1.5f, -2.0f}));
  for (const char* extra : {R"("extra": 1, )", R"("Dtype": "float32", )", R"("value": [], )"}) {
    std::string bad = by_values;
    bad.insert(1, extra);
    try {
      load(bad);
      ADD_FAILURE() << "loaded " << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(": unknown key"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind("/t/", 0), 0u) << e.what();
    }
  }
}

// A module object holds its own keys only: a key it does not have, on the root module or on a
// child, is refused at that key's path.
TEST(SerializeTest, AModuleWithAnUnknownKeyIsRefused) {
  auto child = std::make_shared<Module>();
  child->type = "C";
  {
    Graph& g = child->graph;
    g.output({g.call_function(OpCode::kRelu, {g.placeholder("x", ValueType::tensor({2}))})});
  }
  Module root;
  root.children["c"] = child;
  {
    Graph& g = root.graph;
    g.output({g.call_module("c", {g.placeholder("x", ValueType::tensor({2}))})});
  }
  const std::string doc = save_module(root);
  ASSERT_NO_THROW(load_module(doc));
  struct Where {
    const char* after;  // the text the key goes after
    const char* path;   // the path the error names
  };
  for (Where w :
       {Where{R"("module": {)", "/module/extra"}, Where{R"("c": {)", "/module/children/c/extra"}}) {
    size_t at = doc.find(w.after);
    ASSERT_NE(at, std::string::npos) << w.after << " in " << doc;
    std::string bad = doc;
    bad.insert(at + std::string(w.after).size(), R"("extra": 1, )");
    try {
      load_module(bad);
      ADD_FAILURE() << "a module with an extra key loaded: " << w.path;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(std::string(w.path) + ": unknown key", 0), 0u)
          << e.what();
    }
  }
}

// A shape's element count: a zero dimension is a tensor of no elements (not a division by
// zero in the overflow guard), and a product over the limit is refused whichever dimension
// takes it over, also when each dimension alone is within it.
TEST(SerializeTest, ShapesWithZeroDimensionsLoadAndProductsOverTheLimitDoNot) {
  LoadLimits lim;
  lim.max_tensor_elements = 1000;
  auto shape = [&](const std::string& text) {
    JsonDoc doc = parse_doc(text, lim);
    return serial::shape_from_json(doc.root(), "/shape", lim);
  };
  EXPECT_EQ(shape("[0]"), (Shape{0}));
  EXPECT_EQ(shape("[0, 7]"), (Shape{0, 7}));
  EXPECT_EQ(shape("[7, 0, 1000]"), (Shape{7, 0, 1000}));
  EXPECT_EQ(shape("[10, 100]"), (Shape{10, 100}));
  for (const char* over : {"[10, 101]", "[1000, 2]", "[2, 2, 2, 2, 2, 2, 2, 8]"}) {
    try {
      shape(over);
      ADD_FAILURE() << over << ": accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("more than 1000 elements"), std::string::npos)
          << over << ": " << e.what();
    }
  }
}

// The run budget's multiply-adds, worked by hand: a matmul [m,k] x [k,n] is m*k*n, a sum is
// its input's element count, an elementwise op is none, and a child's count is paid once per
// call. Each module loads at its count and is refused one below it.
TEST(SerializeTest, MultiplyAddsOfARunAreCountedPerOpAndPerCall) {
  auto leaf = [](const std::function<Node*(Graph&)>& body) {
    auto m = std::make_shared<Module>();
    m->type = "M";
    m->graph.output({body(m->graph)});
    return m;
  };
  auto matmul = [](Graph& g) {
    Node* x = g.placeholder("x", ValueType::tensor({4, 8}));
    Node* y = g.placeholder("y", ValueType::tensor({8, 16}));
    return g.call_function(OpCode::kMatmul, {x, y});
  };
  auto sum = [](Graph& g) {
    Node* x = g.placeholder("x", ValueType::tensor({100, 3}));
    return g.call_function(OpCode::kSum, {x, int64_t{0}});
  };
  auto add = [](Graph& g) {
    Node* x = g.placeholder("x", ValueType::tensor({1000}));
    return g.call_function(OpCode::kAdd, {x, x});
  };
  auto twice = [&]() {
    auto root = leaf([](Graph& g) {
      Node* x = g.placeholder("x", ValueType::tensor({4, 8}));
      Node* y = g.placeholder("y", ValueType::tensor({8, 16}));
      Node* a = g.call_module("c", {x, y});
      Node* b = g.call_module("c", {x, y});
      return g.call_function(OpCode::kAdd, {a, b});
    });
    root->children["c"] = leaf(matmul);
    return root;
  };
  struct Row {
    const char* what;
    std::shared_ptr<Module> m;
    size_t flops;
  };
  for (Row r : {Row{"matmul", leaf(matmul), 512}, Row{"sum", leaf(sum), 300},
                Row{"add", leaf(add), 0}, Row{"a child called twice", twice(), 1024}}) {
    infer_types(*r.m);
    std::string text = save_module(*r.m);
    LoadLimits at;
    at.max_run_flops = r.flops;
    EXPECT_NO_THROW(load_module(text, at)) << r.what;
    if (r.flops == 0) continue;
    LoadLimits below;
    below.max_run_flops = r.flops - 1;
    try {
      load_module(text, below);
      ADD_FAILURE() << r.what << ": loaded under a limit of " << r.flops - 1;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("multiply-adds"), std::string::npos)
          << r.what << ": " << e.what();
    }
  }
}

// The run budget's tensor elements: every node's value, a called child's once per call. A root
// (x 4x8, y 8x16, two calls of c each giving 4x16, their sum 4x16) holds 32 + 128 + 3 * 64 = 352;
// the child (x, y, their 4x16 matmul) 224, called twice: 800 in all, worked by hand. It loads
// under max_run_elements = 800 and not under 799.
TEST(SerializeTest, TensorElementsOfARunAreCountedPerNodeAndPerCall) {
  auto child = std::make_shared<Module>();
  {
    Graph& g = child->graph;
    Node* x = g.placeholder("x", ValueType::tensor({4, 8}));
    Node* y = g.placeholder("y", ValueType::tensor({8, 16}));
    g.output({g.call_function(OpCode::kMatmul, {x, y})});
  }
  Module root;
  root.children["c"] = child;
  {
    Graph& g = root.graph;
    Node* x = g.placeholder("x", ValueType::tensor({4, 8}));
    Node* y = g.placeholder("y", ValueType::tensor({8, 16}));
    Node* a = g.call_module("c", {x, y});
    Node* b = g.call_module("c", {x, y});
    g.output({g.call_function(OpCode::kAdd, {a, b})});
  }
  std::string text = save_module(root);
  LoadLimits at;
  at.max_run_elements = 800;
  EXPECT_NO_THROW(load_module(text, at));
  LoadLimits below;
  below.max_run_elements = 799;
  try {
    load_module(text, below);
    ADD_FAILURE() << "loaded under a limit of 799 elements";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("tensor elements"), std::string::npos) << e.what();
  }
}

// Modules nest up to max_module_depth below the root: a chain that deep loads, one deeper is
// refused at the first module past the limit.
TEST(SerializeTest, ModulesNestUpToTheDepthLimit) {
  for (int depth : {3, 4}) {
    std::shared_ptr<Module> chain = testing_support::call_chain(depth);
    std::string text = save_module(*chain);
    LoadLimits lim;
    lim.max_module_depth = 3;
    if (depth == 3) {
      EXPECT_NO_THROW(load_module(text, lim));
      continue;
    }
    try {
      load_module(text, lim);
      ADD_FAILURE() << depth << " levels loaded under a limit of 3";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("/module/children/c/children/c/children/c/children/c: "
                                            "modules nested deeper than 3",
                                            0),
                0u)
          << e.what();
    }
  }
}

TEST(SerializeTest, EveryTruncationOfAValidDocumentIsRejectedCleanly) {
  std::string s = save_module(*quickstart_example());
  int rejected = 0;
  size_t end = s.rfind('}');  // any cut before the closing brace leaves invalid JSON
  int tried = 0;
  for (size_t n = 0; n < end; n += 7, ++tried) {
    try {
      load_module(s.substr(0, n));
    } catch (const InputError&) {
      ++rejected;
    }
  }
  EXPECT_EQ(rejected, tried);
}

TEST(SerializeTest, OversizedDocumentsAreRejectedBeforeParsing) {
  LoadLimits small;
  small.max_bytes = 100;
  std::string s = save_module(*quickstart_example());
  try {
    load_module(s, small);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("over the limit"), std::string::npos);
  }
}

// RFC 4648 section 10's test vectors, both ways; every byte value round-trips; errors name the
// offset of the first bad character.
TEST(SerializeTest, Base64MatchesTheRfcVectors) {
  const std::pair<std::string, std::string> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, coded] : vectors) {
    EXPECT_EQ(base64_encode(plain), coded);
    EXPECT_EQ(base64_decode(coded, "/p"), plain);
  }
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  EXPECT_EQ(base64_encode(all).substr(0, 8), "AAECAwQF");
  EXPECT_EQ(base64_decode(base64_encode(all), "/p"), all);
  auto error = [](const std::string& text) {
    try {
      base64_decode(text, "/p");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error("Zm9v!A=="), "/p: invalid base64 character at offset 4");
  EXPECT_EQ(error("Zm9vY\xff=="), "/p: invalid base64 character at offset 5");
  EXPECT_EQ(error("Zm=v"), "/p: invalid base64 character at offset 2");
  EXPECT_EQ(error("Zm9"), "/p: base64 length 3 is not a multiple of 4");
}

}  // namespace
}  // namespace flatcheck
