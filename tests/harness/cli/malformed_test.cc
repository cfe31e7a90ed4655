// The malformed-input suite: for each file kind the loader reads (modules, programs with
// engines, cases), at least 50 broken documents, each made from a valid one by one targeted
// change. Every one must be rejected by `flatcheck validate` with exit code 2, a message that
// starts with the JSON path of the change, no crash and bounded memory.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <tuple>

#include "core/serialize/serialize.h"
#include "generators/case.h"
#include "tests/harness/cli_run.h"

namespace flatcheck {
namespace {

struct Broken {
  std::string what;
  std::string text;
  std::string path;  // the message must start with this JSON path
};

std::string read(const std::string& p) {
  return read_file(std::string(FLATCHECK_SOURCE_DIR) + "/" + p);
}

std::string dump(const Json& j) {
  return j.dump(1);
}

// Every graph's node list in a document, with its JSON pointer.
void find_node_lists(const Json& j, const std::string& path, std::vector<std::string>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      std::string p = path + "/" + k;
      if (k == "nodes" && v.is_array())
        out.push_back(p);
      else if (k != "blob")
        find_node_lists(v, p, out);
    }
  }
}

// Tensors (objects with dtype) and their pointers.
void find_tensors(const Json& j, const std::string& path, std::vector<std::string>& out) {
  if (j.is_object()) {
    if (j.contains("dtype")) {
      out.push_back(path);
      return;
    }
    for (const auto& [k, v] : j.items()) find_tensors(v, path + "/" + k, out);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) find_tensors(j[i], path + "/" + std::to_string(i), out);
  }
}

// Changes shared by every kind: one per node field, one per argument, four per tensor.
std::vector<Broken> graph_and_tensor_changes(const Json& doc) {
  std::vector<Broken> out;
  auto change = [&](const std::string& what, const std::string& ptr, const Json& value,
                    const std::string& path) {
    Json d = doc;
    d[Json::json_pointer(ptr)] = value;
    out.push_back({what + " at " + ptr, dump(d), path});
  };
  std::vector<std::string> lists;
  find_node_lists(doc, "", lists);
  for (const auto& list : lists) {
    const Json& nodes = doc[Json::json_pointer(list)];
    for (size_t i = 0; i < nodes.size(); ++i) {
      std::string n = list + "/" + std::to_string(i);
      change("unknown node op", n + "/op", "jump", n + "/op");
      change("illegal name", n + "/name", "9 lives", n + "/name");
      if (nodes[i]["op"] == "call_function")
        change("unknown function", n + "/target", "frobnicate", n + "/target");
      if (nodes[i].contains("args"))
        for (size_t a = 0; a < nodes[i]["args"].size(); ++a) {
          std::string ap = n + "/args/" + std::to_string(a);
          if (nodes[i]["args"][a].is_string())
            change("dangling reference", ap, "no_such_node", ap);
          else
            change("unsupported argument", ap, Json{{"x", 1}}, ap);
        }
      if (nodes[i]["op"] == "placeholder")
        change("negative dimension", n + "/val", Json{{"kind", "tensor"}, {"shape", {-2}}},
               n + "/val/shape/0");
    }
  }
  std::vector<std::string> tensors;
  find_tensors(doc, "", tensors);
  for (const auto& t : tensors) {
    change("unsupported dtype", t + "/dtype", "int8", t + "/dtype");
    change("bad base64", t + "/data", "!!!!", t + "/data");
    change("shape bomb", t + "/shape", Json::array({1 << 20, 1 << 20}), t + "/shape");
    change("short data", t + "/data", "AACAPw==", t + "/data");
  }
  change("wrong format", "/format", "flatcheck-other", "/format");
  change("future version", "/version", 99, "/version");
  return out;
}

std::vector<Broken> generic_documents(const std::string& valid) {
  std::vector<Broken> out;
  for (size_t cut : {size_t{1}, size_t{17}, valid.size() / 3, valid.size() / 2, valid.size() - 3})
    out.push_back({"truncated at " + std::to_string(cut), valid.substr(0, cut), "/"});
  out.push_back({"not an object", "[1, 2, 3]", "/"});
  out.push_back({"empty", "", "/"});
  out.push_back({"deep nesting", std::string(5000, '[') + std::string(5000, ']'), "/"});
  return out;
}

// Engine blobs: re-encoded with a valid checksum after the change, so the engine's own
// validation is what rejects them.
std::vector<Broken> engine_changes(const Json& doc) {
  std::vector<Broken> out;
  const std::string engines = "/module/engines";
  for (const auto& item : doc[Json::json_pointer(engines)].items()) {
    const std::string name = item.key();
    const Json& e = item.value();
    std::string base = engines + "/" + name;
    std::string blob_text = base64_decode(e["blob"].get<std::string>(), base);
    Json engine = Json::parse(blob_text);
    auto with_engine = [&](const std::string& what, const std::function<void(Json&)>& f,
                           const std::string& path) {
      Json eng = engine;
      f(eng);
      std::string text = dump_canonical(eng);
      char sum[32];
      std::snprintf(sum, sizeof sum, "%016llx", static_cast<unsigned long long>(fnv1a64(text)));
      Json d = doc;
      d[Json::json_pointer(base)] = Json{{"blob", base64_encode(text)}, {"checksum", sum}};
      out.push_back({what + " in " + name, dump(d), path});
    };
    Json d = doc;
    d[Json::json_pointer(base + "/checksum")] = "0123456789abcdef";
    out.push_back({"checksum mismatch in " + name, dump(d), base + "/checksum"});
    Json d2 = doc;
    d2[Json::json_pointer(base + "/blob")] = "@@@@";
    out.push_back({"bad blob base64 in " + name, dump(d2), base + "/blob"});
    std::string b = base + "/blob";
    for (size_t k = 0; k < engine["ops"].size(); ++k) {
      std::string op = b + "/ops/" + std::to_string(k);
      with_engine(
          "out-of-range input slot", [&](Json& x) { x["ops"][k]["in"][0] = 999; }, op + "/in/0");
      with_engine(
          "unknown engine op", [&](Json& x) { x["ops"][k]["op"] = "warp"; }, op + "/op");
      with_engine(
          "engine op that is not allowed", [&](Json& x) { x["ops"][k]["op"] = "copy_"; }, op);
      with_engine(
          "engine op scalar list past max_rank",
          [&](Json& x) {
            x["ops"][k]["scalars"] = Json::array({Json::array({0, 1, 2, 3, 4, 5, 6, 7, 8})});
          },
          op + "/scalars/0: array of 9 entries is over the limit of 8");
    }
    with_engine(
        "overlapping live slots",
        [&](Json& x) {
          for (auto& s : x["slots"]) s["offset"] = 0;
        },
        b + "/slots/");
    with_engine(
        "slot outside the arena", [&](Json& x) { x["arena"] = 1; }, b + "/slots/");
    with_engine(
        "read before write", [&](Json& x) { x["ops"][0]["in"][0] = x["ops"].back()["out"][0]; },
        b + "/ops/0/in/0");
    with_engine(
        "engine version", [&](Json& x) { x["version"] = 7; }, b + "/version");
    // A slot is an object of its two keys: another key, or a slot that is not an object, is
    // refused at the slot's path.
    with_engine(
        "slot with an unknown key", [&](Json& x) { x["slots"][0]["stride"] = 1; },
        b + "/slots/0/stride: unknown key");
    with_engine(
        "slot that is not an object",
        [&](Json& x) {
          x["slots"][0] = Json::array({1, 0});
        },
        b + "/slots/0: expected an object");
    // Every binding's slot is checked against the slots there are (a slot past them would be
    // read and written off the end), and an output must name a slot something wrote.
    const size_t past = engine["slots"].size() + 3;
    for (const char* key : {"inputs", "outputs", "constants"})
      for (size_t k = 0; k < engine[key].size(); ++k)
        with_engine(
            std::string("out-of-range ") + key + " slot",
            [&](Json& x) { x[key][k]["slot"] = past; },
            b + "/" + key + "/" + std::to_string(k) + ": slot " + std::to_string(past) +
                " out of range");
    if (!engine["outputs"].empty() && !engine["inputs"].empty()) {
      with_engine(
          "input slot written twice",
          [&](Json& x) {
            x["inputs"].push_back(x["inputs"][0]);
            x["inputs"].back()["position"] = x["inputs"].size() - 1;
          },
          b + "/inputs/" + std::to_string(engine["inputs"].size()) + ": slot written twice");
      with_engine(
          "output of a slot never written",
          [&](Json& x) {
            x["slots"].push_back({{"shape", Json::array()}, {"offset", 0}});
            x["outputs"][0]["slot"] = x["slots"].size() - 1;
          },
          b + "/outputs/0: slot never written");
    }
  }
  return out;
}

CliRun validate(const std::string& file) {
#ifndef FLATCHECK_SANITIZED
  return run_cli("validate " + file,
                 "ulimit -v 2000000; ");  // bounded memory: 2 GB of address space
#else
  return run_cli("validate " + file);
#endif
}

void expect_all_rejected(const std::string& kind, const std::vector<Broken>& docs,
                         size_t at_least = 50) {
  EXPECT_GE(docs.size(), at_least) << kind;
  std::cout << kind << ": " << docs.size() << " malformed documents\n";
  auto dir = std::filesystem::temp_directory_path() / ("flatcheck-malformed-" + kind);
  std::filesystem::create_directories(dir);
  int i = 0;
  for (const auto& d : docs) {
    std::string file = (dir / (std::to_string(i++) + ".json")).string();
    std::ofstream(file, std::ios::binary) << d.text;
    CliRun r = validate(file);
    EXPECT_EQ(r.code, 2) << kind << ": " << d.what << "\n" << r.out;
    std::string prefix = "flatcheck: error: " + file + ": " + d.path;
    EXPECT_EQ(r.out.rfind(prefix, 0), 0u)
        << kind << ": " << d.what << ": expected a message starting with\n  " << prefix
        << "\ngot\n  " << r.out;
  }
  std::filesystem::remove_all(dir);
}

TEST(MalformedTest, ValidDocumentsAreAccepted) {
  for (const char* f : {"corpus/fuzz-seeds/loader/module-quickstart.json",
                        "corpus/fuzz-seeds/loader/program-graph-break-flattened.json",
                        "corpus/regression/seed-quickstart.json"})
    EXPECT_EQ(validate(std::string(FLATCHECK_SOURCE_DIR) + "/" + f).code, 0) << f;
}

TEST(MalformedTest, ModulesAreRejectedWithTheirPath) {
  std::string valid = read("corpus/fuzz-seeds/loader/module-quickstart.json");
  auto docs = graph_and_tensor_changes(Json::parse(valid));
  for (auto& d : generic_documents(valid)) docs.push_back(d);
  expect_all_rejected("module", docs);
}

TEST(MalformedTest, ProgramsWithEnginesAreRejectedWithTheirPath) {
  std::string valid = read("corpus/fuzz-seeds/loader/program-graph-break-flattened.json");
  Json doc = Json::parse(valid);
  auto docs = graph_and_tensor_changes(doc);
  for (auto& d : engine_changes(doc)) docs.push_back(d);
  for (auto& d : generic_documents(valid)) docs.push_back(d);
  auto change = [&](const std::string& ptr, const Json& v, const std::string& path) {
    Json d = doc;
    d[Json::json_pointer(ptr)] = v;
    docs.push_back({"signature change at " + ptr, dump(d), path});
  };
  change("/signature/inputs/0/kind", "weights",
         "/signature/inputs/0/kind: expected user_input, parameter or buffer, got \"weights\"");
  change("/signature/outputs/0/kind", "extra",
         "/signature/outputs/0/kind: expected user_output or buffer_mutation, got \"extra\"");
  change("/signature/inputs/0/name", "y", "/");
  change("/signature/outputs", Json::array(), "/");
  expect_all_rejected("program", docs);
}

TEST(MalformedTest, CasesAreRejectedWithTheirPath) {
  std::string valid = read("corpus/regression/seed-quickstart.json");
  Json doc = Json::parse(valid);
  auto docs = graph_and_tensor_changes(doc);
  for (auto& d : generic_documents(valid)) docs.push_back(d);
  auto change = [&](const std::string& ptr, const Json& v, const std::string& path) {
    Json d = doc;
    d[Json::json_pointer(ptr)] = v;
    docs.push_back({"case change at " + ptr, dump(d), path});
  };
  change("/inputs/0/shape", Json::array({3, 3}), "/inputs/0");
  change("/inputs", Json::array(), "/inputs");
  change("/config/min_block_size", -1, "/config/min_block_size");
  change("/config/calls", 100, "/config/calls");
  change("/config/fallback_ops/0", "teleport", "/config/fallback_ops/0");
  change("/config/nan", "maybe", "/config/nan");
  change("/config/colour", "red", "/config/colour");
  change("/seed", -4, "/seed");
  change("/expect", 3, "/expect");
  expect_all_rejected("case", docs);
}

}  // namespace
}  // namespace flatcheck

namespace flatcheck {
namespace {

// Round two (docs/hardening.md): documents that are valid JSON and almost valid programs, but
// would crash, hang or exhaust memory if accepted; each is rejected at load with its path.
Json module_doc(Json module) {
  return Json{{"format", "flatcheck-module"}, {"version", 1}, {"module", std::move(module)}};
}
Json graph(Json nodes) {
  return Json{{"nodes", std::move(nodes)}};
}
Json placeholder(const std::string& name, Json shape) {
  return Json{{"name", name},
              {"op", "placeholder"},
              {"target", name},
              {"val", {{"kind", "tensor"}, {"shape", std::move(shape)}}}};
}
Json call(const std::string& name, const std::string& op, const std::string& target, Json args) {
  return Json{{"name", name}, {"op", op}, {"target", target}, {"args", std::move(args)}};
}
Json output(const std::string& of) {
  return Json{{"name", "output"}, {"op", "output"}, {"target", "output"}, {"args", {of}}};
}

std::vector<Broken> round_two_documents() {
  std::vector<Broken> out;
  Json relu = {{"type", "R"},
               {"graph", graph({placeholder("x", {2}), call("r", "call_function", "relu", {"x"}),
                                output("r")})}};
  // A child that is an alias of its own ancestor, at two depths.
  Json self = {
      {"type", "M"},
      {"children", {{"c", {{"alias", ""}}}}},
      {"graph", graph({placeholder("x", {2}), call("c", "call_module", "c", {"x"}), output("c")})}};
  out.push_back({"a child aliasing the root", dump(module_doc(self)), "/module/children/c/alias"});
  Json inner = {{"type", "N"},
                {"children", {{"up", {{"alias", "a"}}}}},
                {"graph", graph({placeholder("x", {2}), call("u", "call_module", "up", {"x"}),
                                 output("u")})}};
  Json outer = {
      {"type", "M"},
      {"children", {{"a", inner}}},
      {"graph", graph({placeholder("x", {2}), call("a", "call_module", "a", {"x"}), output("a")})}};
  out.push_back(
      {"a grandchild aliasing its parent", dump(module_doc(outer)), "/module/children/a"});
  // A DAG of aliases whose expansion doubles 40 times.
  Json children = {{"m00", relu}};
  for (int i = 1; i < 40; ++i) {
    char name[8], prev[8];
    std::snprintf(name, sizeof name, "m%02d", i);
    std::snprintf(prev, sizeof prev, "m%02d", i - 1);
    children[name] = {{"type", "D"},
                      {"children", {{"a", {{"alias", prev}}}}},
                      {"graph", graph({placeholder("x", {2}), call("a", "call_module", "a", {"x"}),
                                       call("b", "call_module", "a", {"a"}), output("b")})}};
  }
  Json dag = {{"type", "M"},
              {"children", children},
              {"graph", graph({placeholder("x", {2}), call("t", "call_module", "m39", {"x"}),
                               output("t")})}};
  out.push_back({"an exponential DAG of aliases", dump(module_doc(dag)), "/module"});
  // A zero-size matmul whose output has 2^32 elements.
  Json mm = {{"type", "M"},
             {"graph", graph({placeholder("a", {65536, 0}), placeholder("b", {0, 65536}),
                              call("m", "call_function", "matmul", {"a", "b"}), output("m")})}};
  out.push_back({"a zero-size matmul with a huge output", dump(module_doc(mm)), "/module"});
  // reshape whose element count overflows int64.
  Json big(std::vector<int64_t>(8, 16777216));
  Json rs = {{"type", "M"},
             {"graph", graph({placeholder("x", {2}),
                              call("r", "call_function", "reshape", {"x", big}), output("r")})}};
  out.push_back({"a reshape whose element count overflows", dump(module_doc(rs)), "/module"});
  // getitem of a static int instead of a node.
  Json gi = {{"type", "M"},
             {"graph", graph({placeholder("x", {2}), call("g", "call_function", "getitem", {5, 0}),
                              output("x")})}};
  out.push_back({"a getitem of a static int", dump(module_doc(gi)), "/module/graph"});
  // copy_ into a parameter (only buffers are updated in place): rejected at load, not at run.
  Json param = {
      {"type", "M"},
      {"params", {{"w", {{"data", "AAAAAAAAAAA="}, {"dtype", "float32"}, {"shape", {2}}}}}},
      {"graph", graph({placeholder("x", {2}), call("w", "get_attr", "w", Json::array()),
                       call("c", "call_function", "copy_", {"w", "x"}), output("x")})}};
  out.push_back({"a copy_ into a parameter", dump(module_doc(param)), "/module/graph"});
  out.push_back({"an unknown key in a case's expect",
                 R"({"format": "flatcheck-case", "version": 1, "expect": {"property": "a", )"
                 R"("stage": "b", "op": "c", "extra": 1}, "inputs": [{"data": "AAAAAAAAAAA=", )"
                 R"("dtype": "float32", "shape": [2]}], "module": )" +
                     dump(relu) + "}",
                 "/expect/extra"});
  out.push_back({"a case without a module",
                 R"({"format": "flatcheck-case", "version": 1, "inputs": []})", "/module"});
  // Strict JSON.
  out.push_back({"duplicate keys",
                 R"({"format": "flatcheck-module", "version": 1, "version": 1, "module": {}})",
                 "/version"});
  out.push_back({"an integer past uint64",
                 R"({"format": "flatcheck-module", "version": 123456789012345678901234567890})",
                 "/version"});
  out.push_back({"a duplicate key deep inside",
                 [&] {
                   std::string t = dump(module_doc(relu));
                   size_t at = t.find("\"target\": \"relu\"");
                   return t.insert(at, "\"target\": \"neg\", ");
                 }(),
                 "/module/graph/nodes/1/target"});
  std::string empties = "[";
  for (int i = 0; i < 80000; ++i) empties += i ? ",{}" : "{}";
  out.push_back({"80,000 empty objects", empties + "]", "/"});
  return out;
}

TEST(MalformedTest, RoundTwoDocumentsAreRejectedAtLoadWithTheirPath) {
  expect_all_rejected("round-two", round_two_documents(), 12);
}

// Round three (docs/hardening.md): what a loader once accepted and a stage then refused, walks
// whose cost the size limits did not bound, readers that stopped early and error paths that
// named the wrong place. Several documents per class; each is rejected at load with its path.
Json scalar_placeholder(const std::string& name, const std::string& kind) {
  return Json{{"name", name}, {"op", "placeholder"}, {"target", name}, {"val", {{"kind", kind}}}};
}
Json tensor_state(int64_t n) {
  return Json{{"dtype", "float32"}, {"shape", {n}}, {"values", std::vector<int>(n, 1)}};
}
// A module `c(x: f32[2], <statics...>)` that returns `body`'s last node.
Json child_module(Json statics, Json body) {
  Json nodes = Json::array({placeholder("x", {2})});
  for (auto& s : statics) nodes.push_back(s);
  std::string last = "x";
  for (auto& n : body) {
    last = n["name"];
    nodes.push_back(n);
  }
  nodes.push_back(output(last));
  return Json{{"type", "C"}, {"graph", graph(nodes)}};
}
// The root calls child `c` with `args` and returns the result.
Json calling(Json child, Json args, const std::string& child_name = "c") {
  return module_doc(
      {{"type", "M"},
       {"children", {{child_name, std::move(child)}}},
       {"graph", graph({placeholder("x", {2}),
                        call("r", "call_module", child_name, std::move(args)), output("r")})}});
}

std::vector<Broken> round_three_documents() {
  std::vector<Broken> out;
  auto add = [&](const std::string& what, const Json& doc, const std::string& path) {
    out.push_back({what, dump(doc), path});
  };
  // 2. A getitem's index from a static int: directly, through a child call's result, and a
  // constant out of range (type inference used to end the process with bad_variant_access).
  Json split_by = {
      {"type", "M"},
      {"graph", graph({placeholder("x", {4}), scalar_placeholder("k", "int"),
                       call("s", "call_function", "split", {"x", 0, 2}),
                       call("g", "call_function", "getitem", {"s", "k"}), output("g")})}};
  add("a getitem indexed by a static int placeholder", module_doc(split_by), "/module/graph");
  Json by_call = {
      {"type", "M"},
      {"children", {{"c", child_module(Json::array(), Json::array())}}},
      {"graph", graph({placeholder("x", {2}), call("s", "call_function", "split", {"x", 0, 2}),
                       call("k", "call_module", "c", {"x"}),
                       call("g", "call_function", "getitem", {"s", "k"}), output("g")})}};
  add("a getitem indexed by a child call's result", module_doc(by_call), "/module/graph");
  Json past = split_by;
  past["graph"]["nodes"].erase(1);
  past["graph"]["nodes"][2]["args"][1] = 5;
  add("a getitem past the tuple's end", module_doc(past), "/module");
  // 2. A wide DAG of aliases without calls, and with state in every module: its paths double
  // at each level (type inference walked them all).
  for (bool state : {false, true}) {
    Json children = {{"m00", child_module(Json::array(), Json::array())}};
    for (int i = 1; i < 24; ++i) {
      char name[8], prev[8];
      std::snprintf(name, sizeof name, "m%02d", i);
      std::snprintf(prev, sizeof prev, "m%02d", i - 1);
      Json m = {{"type", "D"},
                {"children", {{"a", {{"alias", prev}}}, {"b", {{"alias", prev}}}}},
                {"graph", graph({placeholder("x", {2}), output("x")})}};
      if (state) m["params"] = {{"w", tensor_state(2)}};
      children[name] = m;
    }
    add(std::string("a wide alias DAG without calls") + (state ? ", state in every module" : ""),
        module_doc({{"type", "M"},
                    {"children", children},
                    {"graph", graph({placeholder("x", {2}), output("x")})}}),
        "/module: module and state paths");
  }
  // 4. Child names the pipeline uses as separators: variants ("n@1"), provenance ("n@1/add").
  for (const std::string& name : {"a@1", "a/b", "a b", "-"}) {
    std::string escaped = name == "a/b" ? "a~1b" : name;
    add("a child named '" + name + "'",
        calling(child_module(Json::array(), Json::array()), Json::array({"x"}), name),
        "/module/children/" + escaped);
  }
  // 4. A root output that is a tuple (a child's two outputs returned as one value).
  Json two = child_module(Json::array(), Json::array());
  two["graph"]["nodes"][1]["args"] = {"x", "x"};
  add("a root output that is a tuple", calling(two, Json::array({"x"})), "/module");
  // 4. Static arguments the child's graph cannot take: a dim out of range, a float for a flag,
  // a tensor for a flag, a flag for a tensor.
  Json summer = child_module(Json::array({scalar_placeholder("d", "int")}),
                             Json::array({call("s", "call_function", "sum", {"x", "d"})}));
  add("a static dim out of range", calling(summer, {"x", 5}), "/module");
  add("a static dim out of range (negative)", calling(summer, {"x", -3}), "/module");
  Json flagged = child_module(Json::array({scalar_placeholder("f", "bool")}),
                              Json::array({call("n", "call_function", "neg", {"x"}),
                                           call("b", "call_function", "branch", {"f", "x", "n"})}));
  add("a float passed for a bool", calling(flagged, {"x", 1.5}), "/module");
  add("a tensor passed for a bool", calling(flagged, {"x", "x"}), "/module");
  add("a bool passed for a tensor", calling(flagged, {true, true}), "/module");
  // A list has no placeholder type: typed as a float once, it loaded for a float and the eager
  // run could not pass it (found by the structure mutator's retyped arguments).
  Json scaler = child_module(Json::array({scalar_placeholder("s", "float")}),
                             Json::array({call("m", "call_function", "mul_scalar", {"x", "s"})}));
  add("a list passed for a float", calling(scaler, {"x", Json::array({1, 2})}), "/module/graph");
  add("an empty list passed for a float", calling(scaler, {"x", Json::array()}), "/module/graph");
  add("a list passed for a tensor", calling(scaler, {Json::array({2}), 0.5}), "/module/graph");
  // 4. A buffer aliasing a parameter (export lifts one tensor once, as one kind).
  Json alias_kind = calling(child_module(Json::array(), Json::array()), Json::array({"x"}));
  alias_kind["module"]["params"] = {{"w", tensor_state(2)}};
  alias_kind["module"]["children"]["c"]["buffers"] = {{"b", {{"alias", "w"}}}};
  add("a buffer aliasing a parameter", alias_kind, "/module/children/c/buffers/b/alias");
  Json alias_kind2 = alias_kind;
  alias_kind2["module"].erase("params");
  alias_kind2["module"]["buffers"] = {{"w", tensor_state(2)}};
  alias_kind2["module"]["children"]["c"].erase("buffers");
  alias_kind2["module"]["children"]["c"]["params"] = {{"p", {{"alias", "w"}}}};
  add("a parameter aliasing a buffer", alias_kind2, "/module/children/c/params/p/alias");
  // 4. get_attr with arguments; state names past max_name_length.
  Json ga = {{"type", "M"},
             {"params", {{"w", tensor_state(2)}}},
             {"graph", graph({placeholder("x", {2}), call("w", "get_attr", "w", {"x"}),
                              call("a", "call_function", "add", {"x", "w"}), output("a")})}};
  add("a get_attr with arguments", module_doc(ga), "/module/graph");
  std::string long_name(300, 'p');
  for (const char* kind : {"params", "buffers"}) {
    Json ln = {{"type", "M"},
               {kind, {{long_name, tensor_state(2)}}},
               {"graph", graph({placeholder("x", {2}), output("x")})}};
    add(std::string("a 300-character name in ") + kind, module_doc(ln),
        "/module/" + std::string(kind) + "/" + long_name);
  }
  // 5. A valid document followed by a NUL byte and more: nlohmann's lexer stopped at the NUL.
  std::string valid = dump(calling(child_module(Json::array(), Json::array()), Json::array({"x"})));
  out.push_back({"a NUL and garbage after the document", valid + std::string("\0garbage", 8), "/"});
  out.push_back({"a NUL after the document", valid + std::string(1, '\0'), "/"});
  out.push_back({"a NUL and a second document", valid + std::string("\0", 1) + valid, "/"});
  // 6. A syntax error inside an array names the element it is in; keys in paths are escaped.
  std::string arr =
      dump(module_doc({{"type", "M"}, {"graph", graph({placeholder("x", {2}), output("x")})}}));
  size_t out_at = arr.rfind("{");
  out.push_back({"a syntax error in the second node",
                 arr.substr(0, out_at) + "{\"name\": @" + arr.substr(out_at + 1),
                 "/module/graph/nodes/1"});
  Json slash = module_doc(
      {{"type", "M"}, {"graph", graph({placeholder("x", {2}), output("x")})}, {"a/b~c", 1}});
  add("an unknown key with '/' and '~'", slash, "/module/a~1b~0c");
  Json empty_key =
      module_doc({{"type", "M"}, {"graph", graph({placeholder("x", {2}), output("x")})}, {"", 1}});
  add("an unknown empty key", empty_key, "/module/:");
  return out;
}

TEST(MalformedTest, RoundThreeDocumentsAreRejectedAtLoadWithTheirPath) {
  expect_all_rejected("round-three", round_three_documents(), 28);
}

TEST(MalformedTest, OnlyRegularFilesAreRead) {
  std::string fifo = (std::filesystem::temp_directory_path() / "flatcheck-fifo.json").string();
  std::filesystem::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  for (const std::string& path : {fifo, std::string("/dev/zero"), std::string("/tmp")}) {
    CliRun r = validate(path);
    EXPECT_EQ(r.code, 2) << path << ": " << r.out;
    EXPECT_NE(r.out.find(path + ": not a regular file"), std::string::npos) << r.out;
  }
  std::filesystem::remove(fifo);
}

TEST(MalformedTest, AValidModuleAtTheNodeLimitLoads) {
  Json nodes = Json::array({placeholder("x", {2})});
  std::string prev = "x";
  for (int i = 0; i < 99998; ++i) {
    std::string name = "n" + std::to_string(i);
    nodes.push_back(call(name, "call_function", "neg", {prev}));
    prev = name;
  }
  nodes.push_back(output(prev));
  auto file = std::filesystem::temp_directory_path() / "flatcheck-100k.json";
  std::ofstream(file) << module_doc({{"type", "M"}, {"graph", graph(nodes)}}).dump();
  CliRun r = validate(file.string());
  EXPECT_EQ(r.code, 0) << r.out.substr(0, 500);
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace flatcheck

namespace flatcheck {
namespace {

TEST(MalformedTest, AnEngineCallOfTheWrongArityOrShapeIsRejectedAtLoad) {
  CliRun show = run_cli("show " + std::string(FLATCHECK_SOURCE_DIR) +
                        "/corpus/regression/seed-quickstart.json --stage flattened --format json");
  ASSERT_EQ(show.code, 0) << show.out;
  Json doc = Json::parse(show.out);
  Json& nodes = doc["module"]["graph"]["nodes"];
  size_t ee = 0;
  while (ee < nodes.size() && nodes[ee]["target"] != "execute_engine") ++ee;
  ASSERT_LT(ee, nodes.size());
  auto dir = std::filesystem::temp_directory_path() / "flatcheck-engine-calls";
  std::filesystem::create_directories(dir);
  Json extra = doc;
  Json& ea = extra["module"]["graph"]["nodes"][ee]["args"];
  ea.insert(ea.begin(), ea[0]);
  Json shape = doc;
  Json& sn = shape["module"]["graph"]["nodes"];
  std::string first = sn[ee]["args"][0];
  sn.insert(sn.begin() + static_cast<long>(ee), Json{{"args", {first, {4}}},
                                                     {"name", "flat_in"},
                                                     {"op", "call_function"},
                                                     {"target", "reshape"}});
  sn[ee + 1]["args"][0] = "flat_in";
  for (const auto& [name, d, want] :
       {std::tuple<std::string, Json, std::string>{"extra", extra, "takes 1 inputs, given 2"},
        {"shape", shape, "expects f32[2, 2]"}}) {
    std::string file = (dir / (name + ".json")).string();
    std::ofstream(file) << d.dump();
    CliRun r = validate(file);
    EXPECT_EQ(r.code, 2) << name << ": " << r.out;
    EXPECT_NE(r.out.find(want), std::string::npos) << name << ": " << r.out;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace flatcheck

namespace flatcheck {
namespace {

TEST(MalformedTest, LimitsAreSettableFromTheCommandLine) {
  std::string src = std::string(FLATCHECK_SOURCE_DIR) + "/corpus/regression/seed-quickstart.json";
  EXPECT_EQ(run_cli("validate " + src).code, 0);
  CliRun low = run_cli("validate " + src + " --limit max_nodes=3");
  EXPECT_EQ(low.code, 2) << low.out;
  EXPECT_NE(low.out.find("over the limit of 3"), std::string::npos) << low.out;
  // max_nodes bounds the whole document, not one graph: the root graph holds 6 nodes and the
  // child's 11, 17 in all.
  CliRun total = run_cli("validate " + src + " --limit max_nodes=16");
  EXPECT_EQ(total.code, 2) << total.out;
  EXPECT_NE(total.out.find("more than 16 nodes in the document"), std::string::npos) << total.out;
  EXPECT_EQ(run_cli("validate " + src + " --limit max_nodes=17").code, 0);
  CliRun calls = run_cli("--limit=max_calls=1,max_json_depth=64 validate " + src);
  EXPECT_EQ(calls.code, 2) << calls.out;
  EXPECT_NE(calls.out.find("module calls"), std::string::npos) << calls.out;
  // The structural budget (module calls among it) is checked before type inference: a document
  // whose root gives its child an argument of the wrong shape is refused for its calls first.
  std::ifstream in(src);
  Json doc = Json::parse(in);
  doc["module"]["graph"]["nodes"][0]["val"]["shape"] = {3, 5};
  const std::string bad_shape =
      (std::filesystem::temp_directory_path() / "flatcheck-limits-bad-shape.json").string();
  std::ofstream(bad_shape) << doc.dump();
  CliRun typed = run_cli("validate " + bad_shape);
  EXPECT_EQ(typed.code, 2) << typed.out;
  EXPECT_NE(typed.out.find("its placeholder %x is f32[2, 2]"), std::string::npos) << typed.out;
  CliRun inlined = run_cli("--limit=max_inlined_nodes=20 validate " + bad_shape);
  EXPECT_EQ(inlined.code, 2) << inlined.out;
  EXPECT_NE(inlined.out.find("the program inlines to this many nodes: 28, over the limit of 20"),
            std::string::npos)
      << inlined.out;
  CliRun first = run_cli("--limit=max_calls=1 validate " + bad_shape);
  EXPECT_EQ(first.code, 2) << first.out;
  EXPECT_NE(first.out.find("one run makes this many module calls: 2, over the limit of 1"),
            std::string::npos)
      << first.out;
  std::filesystem::remove(bad_shape);
  for (const char* bad : {"max_nodes", "max_nodes=", "max_nodes=-1", "max_nodes=010x", "bogus=1",
                          "max_json_depth=99999999999"}) {
    CliRun r = run_cli("validate " + src + " --limit " + bad);
    EXPECT_EQ(r.code, 2) << bad << ": " << r.out;
    EXPECT_NE(r.out.find("--limit expects"), std::string::npos) << bad << ": " << r.out;
  }
}

}  // namespace
}  // namespace flatcheck

namespace flatcheck {
namespace {

// Limits raised to their hard maxima keep every walk within the stack: a module tree 200 levels
// deep (each level calls the next) loads and runs through every stage.
TEST(MalformedTest, NestingNearTheHardMaximaRunsEveryStage) {
  Json inner = {{"type", "L"},
                {"graph", graph({placeholder("x", {2}), call("n", "call_function", "neg", {"x"}),
                                 output("n")})}};
  for (int i = 0; i < 200; ++i)
    inner = {{"type", "L"},
             {"children", {{"c", inner}}},
             {"graph",
              graph({placeholder("x", {2}), call("c", "call_module", "c", {"x"}), output("c")})}};
  Json doc = {{"format", "flatcheck-case"},
              {"version", 1},
              {"inputs", {{{"dtype", "float32"}, {"shape", {2}}, {"values", {1, -2}}}}},
              {"module", inner}};
  auto file = std::filesystem::temp_directory_path() / "flatcheck-deep.json";
  std::ofstream(file) << doc.dump();
  CliRun refused = run_cli("validate " + file.string());
  EXPECT_EQ(refused.code, 2) << refused.out;  // the default depth is 32
  CliRun over = run_cli("--limit max_module_depth=257 validate " + file.string());
  EXPECT_EQ(over.code, 2) << over.out;  // past the hard maximum of 256
  CliRun r = run_cli("--limit max_module_depth=256,max_json_depth=1024 replay " + file.string());
  EXPECT_EQ(r.code, 0) << r.out.substr(0, 2000);
  std::filesystem::remove(file);
}

// What the pipeline writes, it reads back: a chain of 30,000 acc ops makes an engine of more
// than 20,000 slots (the default bound on documents from outside), which the pipeline's own
// round trip reads under the hard maxima; the overlap check over its slots is a sweep.
TEST(MalformedTest, AnEngineOfMoreThan20000SlotsWrittenByThePipelineRoundTrips) {
  Json nodes = Json::array({placeholder("x", {2})});
  std::string prev = "x";
  for (int i = 0; i < 30000; ++i) {
    std::string name = "n" + std::to_string(i);
    nodes.push_back(call(name, "call_function", i % 2 ? "neg" : "abs", {prev}));
    prev = name;
  }
  nodes.push_back(output(prev));
  Json doc = {{"format", "flatcheck-case"},
              {"version", 1},
              {"config", {{"calls", 1}, {"fallback_ops", Json::array()}}},
              {"inputs", {{{"dtype", "float32"}, {"shape", {2}}, {"values", {1, -2}}}}},
              {"module", {{"type", "M"}, {"graph", graph(nodes)}}}};
  auto file = std::filesystem::temp_directory_path() / "flatcheck-big-engine.json";
  std::ofstream(file) << doc.dump();
  // The per-case limit raised: in the sanitizer build on a loaded machine this 30,000-node case
  // takes close to the default 10 s (1.4 s in a Release build); what is checked is the round
  // trip, not the time.
  CliRun r = run_cli("replay --timeout 120 " + file.string());
  EXPECT_EQ(r.code, 0) << r.out.substr(0, 2000);
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace flatcheck
