// Reach measurement (harness/reach.h): a walk over the eager tree that looks for each shape.
#include "harness/reach.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

#include "core/base/names.h"
#include "core/ir/namespace.h"
#include "harness/pass_rules.h"

namespace flatcheck {
namespace {

struct ReachInfo {
  std::string_view name, doc;
};

constexpr ReachInfo kReach[] = {
#define X(e, name, doc) {name, doc},
#include "harness/reach.def"
#undef X
};

bool special_float(float f) {
  return std::isnan(f) || std::isinf(f) || (f == 0 && std::signbit(f)) ||
         std::fpclassify(f) == FP_SUBNORMAL;
}

bool starts_with(const std::string& s, std::string_view p) {
  return s.rfind(p, 0) == 0;
}

bool is_fn(const Node* n, OpCode op) {
  return n->op == NodeOp::kCallFunction && n->fn == op;
}

// A static placeholder is "used for itself" unless every user passes it on to a child call or
// is a branch choosing between child results. With `live`, only users in it count.
bool only_forwarded(const Graph& g, const Node* ph,
                    const std::unordered_map<const Node*, std::set<int64_t>>* live = nullptr) {
  auto from_call = [](const Arg& a) {
    const Node* const* p = std::get_if<Node*>(&a);
    if (!p) return false;
    const Node* n = *p;
    if (is_fn(n, OpCode::kGetitem)) n = n->input_nodes().empty() ? n : n->input_nodes()[0];
    return n->op == NodeOp::kCallModule;
  };
  for (Node* u : g.users(ph)) {
    if (u->op == NodeOp::kCallModule || (live && !live->count(u))) continue;
    if (is_fn(u, OpCode::kBranch) && u->args.size() == 3 && from_call(u->args[1]) &&
        from_call(u->args[2]))
      continue;
    return false;
  }
  return true;
}

std::string arg_text(const Arg& a) {
  std::ostringstream os;
  if (auto f = std::get_if<float>(&a))
    os << "f" << float_bits(*f);
  else
    os << a;
  return os.str();
}

class ReachWalk {
 public:
  explicit ReachWalk(const Case& c) : c_(c) {}

  ReachBits run() {
    tree(*c_.module, "", 0);
    calls(*c_.module, "", {}, live_nodes(*c_.module, {}, {}, 0), 0);
    whole_case();
    for (const auto& [fqn, specs] : specs_)
      for (size_t i = 0; i < specs.size(); ++i)
        for (size_t j = i + 1; j < specs.size(); ++j) {
          if (specs[i].full == specs[j].full) continue;
          set(Reach::kSpecialized);
          if (specs[i].own == specs[j].own) set(Reach::kNestedOnly);
          if (specs[i].ints != specs[j].ints) set(Reach::kIntShapeSpec);
        }
    return bits_;
  }

 private:
  struct Spec {
    std::string own, full, ints;
  };

  void set(Reach r) { bits_ |= reach_bit(r); }

  void tree(const Module& m, const std::string& path, int depth) {
    if (depth > kMaxModuleDepth) return;
    paths_.insert(path);
    bool first = ++visits_[&m] == 1;
    if (!first) set(Reach::kModuleAlias);
    for (const auto& [k, t] : m.params) {
      paths_.insert(join_fqn(path, k));
      if (first && !params_.insert(t.get()).second) set(Reach::kSharedParams);
    }
    for (const auto& [k, t] : m.buffers) {
      paths_.insert(join_fqn(path, k));
      if (first && !buffers_.insert(t.get()).second) set(Reach::kSharedBuffers);
    }
    if (first) {
      graph(m.graph);
      for (const Module* other : modules_)
        if (other->type == m.type && !m.params.empty() && other->params != m.params &&
            same_structure(other->graph, m.graph))
          set(Reach::kRepeatedBlocks);
      modules_.push_back(&m);
    }
    if (m.children.size() > 10) set(Reach::kManyChildren);
    // Children are sorted by name, and a name sorts right before the names it is a prefix of,
    // so neighbours suffice (one pass, however many children a hostile file gives).
    for (auto it = m.children.begin(); it != m.children.end(); ++it)
      if (auto next = std::next(it);
          next != m.children.end() && starts_with(next->first, it->first))
        set(Reach::kPrefixSiblings);
    for (const auto& [k, child] : m.children) {
      if (!k.empty() && k.find_first_not_of("0123456789") == std::string::npos)
        set(Reach::kNumericNames);
      tree(*child, join_fqn(path, k), depth + 1);
    }
  }

  void graph(const Graph& g) {
    std::vector<Node*> nodes = g.nodes();
    std::unordered_map<const Node*, size_t> pos;
    for (size_t i = 0; i < nodes.size(); ++i) pos[nodes[i]] = i;
    std::map<std::string, std::vector<std::set<int64_t>>> read_at;  // call target -> indices
    std::map<std::string, std::pair<int, bool>> builtin;  // base -> names, one not its op's own
    for (Node* n : nodes) {
      std::string_view base, digits;
      if (!split_suffix(n->name, &base, &digits)) base = n->name;
      if (is_reserved_name(base)) {
        auto& [count, foreign] = builtin[std::string(base)];
        ++count;
        foreign |= !(n->op == NodeOp::kCallFunction && n->target == base);
        if (count >= 2 && foreign) set(Reach::kBuiltinMeetsSuffixed);
      }
      if (starts_with(n->name, "p_") || starts_with(n->name, "b_") ||
          starts_with(n->name, "_run_on_"))
        set(Reach::kReservedNames);
      if (n->op == NodeOp::kCallModule && n->target.find('.') != std::string::npos)
        set(Reach::kLevelSkip);
      for (const auto& a : n->args)
        if (auto f = std::get_if<float>(&a); f && special_float(*f)) set(Reach::kSpecialScalars);
      if (n->op == NodeOp::kPlaceholder && n->meta.val && n->meta.val->kind == ValueType::kBool &&
          !g.users(n).empty() && only_forwarded(g, n))
        set(Reach::kForwardedFlag);
      if (n->op == NodeOp::kCallModule) {
        std::set<int64_t> idx;
        for (Node* u : g.users(n))
          if (is_fn(u, OpCode::kGetitem)) idx.insert(std::get<int64_t>(u->args.at(1)));
        auto& seen = read_at[n->target];
        for (const auto& s : seen)
          if (!idx.empty() && !s.empty() && s != idx) set(Reach::kDisjointOutputs);
        seen.push_back(idx);
      }
      if (is_fn(n, OpCode::kSplit)) {
        for (Node* u : g.users(n)) {  // users in graph order
          if (is_fn(u, OpCode::kGetitem) && std::get<int64_t>(u->args.at(1)) == 1)
            set(Reach::kReverseGetitems);
          break;
        }
      }
      if (n->op == NodeOp::kGetAttr) read_after_write(g, nodes, pos, n);
    }
  }

  // A buffer read, then an update of that buffer, then a use of the read value; or a child's
  // buffer read by the parent after a call of the child.
  void read_after_write(const Graph& g, const std::vector<Node*>& nodes,
                        const std::unordered_map<const Node*, size_t>& pos, const Node* rd) {
    size_t last_use = 0;
    for (Node* u : g.users(rd))
      if (!(is_fn(u, OpCode::kCopy) && u->args.size() == 2 && std::get_if<Node*>(&u->args[0]) &&
            std::get<Node*>(u->args[0]) == rd))
        last_use = std::max(last_use, pos.at(u));
    for (size_t i = pos.at(rd) + 1; i < last_use; ++i) {
      const Node* n = nodes[i];
      if (is_fn(n, OpCode::kCopy) && !n->input_nodes().empty() &&
          n->input_nodes()[0]->op == NodeOp::kGetAttr && n->input_nodes()[0]->target == rd->target)
        set(Reach::kReadAfterWrite);
    }
    size_t dot = rd->target.rfind('.');
    if (dot == std::string::npos) return;
    std::string owner = rd->target.substr(0, dot);
    for (size_t i = 0; i < pos.at(rd); ++i)
      if (nodes[i]->op == NodeOp::kCallModule && nodes[i]->target == owner)
        set(Reach::kReadAfterWrite);
  }

  using Statics = std::unordered_map<const Node*, Arg>;
  using Live = std::unordered_map<const Node*, std::set<int64_t>>;  // node -> outputs read

  // True when a module (or a child it calls) updates state in place: export keeps such calls.
  bool effectful(const Module& m, int depth) {
    if (depth > kMaxModuleDepth) return false;
    auto [it, fresh] = effects_.emplace(&m, false);
    if (!fresh) return it->second;
    bool e = false;
    for (Node* n = m.graph.first(); n && !e; n = n->next) {
      if (n->op == NodeOp::kCallFunction && !op_info(n->fn).pure) e = true;
      if (n->op == NodeOp::kCallModule)
        if (const Module* child = m.submodule(n->target)) e = effectful(*child, depth + 1);
    }
    return it->second = e;  // map iterators survive the insertions of the recursion
  }

  // The nodes export keeps of one call of `m` whose caller reads outputs `read` (empty: all):
  // those an output read or an in-place update depends on; a branch on a static flag keeps only
  // its choice. For a call node, the outputs of it that are read (empty: the whole value).
  Live live_nodes(const Module& m, const std::set<int64_t>& read, const Statics& statics,
                  int depth) {
    Live live;
    std::vector<const Node*> work;
    auto mark = [&](const Arg& a, std::optional<int64_t> item) {
      const Node* const* p = std::get_if<Node*>(&a);
      if (!p) return;
      auto [it, fresh] = live.try_emplace(*p);
      if (item && (fresh || !it->second.empty())) it->second.insert(*item);
      if (!item) it->second.clear();
      if (fresh) work.push_back(*p);
    };
    const Node* out = m.graph.output_node();
    if (!out) return live;
    for (size_t i = 0; i < out->args.size(); ++i)
      if (read.empty() || read.count(static_cast<int64_t>(i))) mark(out->args[i], std::nullopt);
    for (Node* n = m.graph.first(); n; n = n->next) {
      bool keep = n->op == NodeOp::kCallFunction && !op_info(n->fn).pure;
      if (n->op == NodeOp::kCallModule)
        if (const Module* child = m.submodule(n->target)) keep = effectful(*child, depth + 1);
      if (keep) mark(n, std::nullopt);
    }
    while (!work.empty()) {
      const Node* n = work.back();
      work.pop_back();
      if (is_fn(n, OpCode::kGetitem) && n->args.size() == 2) {
        if (auto i = std::get_if<int64_t>(&n->args[1])) mark(n->args[0], *i);
        continue;
      }
      if (is_fn(n, OpCode::kBranch) && n->args.size() == 3) {
        Arg flag = n->args[0];
        if (auto p = std::get_if<Node*>(&flag); p && statics.count(*p)) flag = statics.at(*p);
        if (auto b = std::get_if<bool>(&flag)) {
          mark(n->args[*b ? 1 : 2], std::nullopt);
          continue;
        }
      }
      for (const auto& a : n->args) mark(a, std::nullopt);
    }
    return live;
  }

  // Every live call of `m` (its nodes export keeps: `live`), with its static arguments resolved;
  // returns the call's full specialization (a call or a use export removes as dead code does
  // not specialize).
  std::string calls(const Module& m, const std::string& fqn, const Statics& statics,
                    const Live& live, int depth) {
    if (depth > kMaxModuleDepth) return "";
    auto used = [](const Graph& g, const Node* ph, const Live& child_live) {
      for (Node* u : g.users(ph))
        if (child_live.count(u)) return true;
      return false;
    };
    std::string nested;
    for (Node* n = m.graph.first(); n; n = n->next) {
      if (n->op != NodeOp::kCallModule || !live.count(n)) continue;
      const Module* child = m.submodule(n->target);
      if (!child) continue;
      if (depth + 1 + std::count(n->target.begin(), n->target.end(), '.') >= 4)
        set(Reach::kFourDeep);
      std::vector<Node*> phs = child->graph.placeholders();
      Statics env;
      for (size_t i = 0; i < n->args.size() && i < phs.size(); ++i) {
        Arg a = n->args[i];
        if (auto p = std::get_if<Node*>(&a)) {
          auto it = statics.find(*p);
          if (it == statics.end()) continue;  // a tensor
          a = it->second;
        }
        env[phs[i]] = a;
      }
      Live child_live = live_nodes(*child, live.at(n), env, depth + 1);
      Spec s;
      std::string args;
      for (Node* ph : phs) {
        auto it = env.find(ph);
        if (it == env.end() || !used(child->graph, ph, child_live)) continue;
        std::string text = arg_text(it->second) + ",";
        args += text;
        if (!only_forwarded(child->graph, ph, &child_live)) s.own += text;
        if (std::holds_alternative<int64_t>(it->second) ||
            std::holds_alternative<std::vector<int64_t>>(it->second))
          s.ints += text;
      }
      std::string cfqn = join_fqn(fqn, n->target);
      s.full = s.own + "|" + std::to_string(env.size()) + "[" +
               calls(*child, cfqn, env, child_live, depth + 1) + "]" + args;
      nested += n->target + "=" + s.full + ";";
      specs_[cfqn].push_back(std::move(s));
    }
    return nested;
  }

  void whole_case() {
    if (c_.config.calls >= 3) set(Reach::kManyCalls);
    const Graph& g = c_.module->graph;
    if (Node* out = g.output_node(); out && out->args.size() > 2) set(Reach::kManyOutputs);
    for (Node* ph : g.placeholders())
      if (ph->meta.val && ph->meta.val->kind == ValueType::kTensor) {
        const Shape& s = ph->meta.val->shape;
        if (s.size() == 3) set(Reach::kRank3);
        for (int64_t d : s)
          if (d == 0) set(Reach::kZeroSize);
      }
    bool split_used = false;
    for (const Module* m : modules_)
      for (Node* n = m->graph.first(); n; n = n->next) split_used |= is_fn(n, OpCode::kSplit);
    if (split_used && c_.config.fallback_ops.count("split")) set(Reach::kMultiOutputFallback);
    std::map<std::string, std::set<std::string>> mangled, lowered;
    for (const auto& p : paths_) {
      std::string m = p;
      for (char& ch : m)
        if (ch == '.') ch = '_';
      lowered[export_mangle(m)].insert(m);
      mangled[std::move(m)].insert(p);
    }
    for (const auto& [_, originals] : mangled)
      if (originals.size() > 1) set(Reach::kMangleCollision);
    for (const auto& [_, cased] : lowered)
      if (cased.size() > 1) set(Reach::kCaseCollision);
  }

  const Case& c_;
  ReachBits bits_ = 0;
  std::map<const Module*, int> visits_;
  std::vector<const Module*> modules_;
  std::set<const Tensor*> params_, buffers_;
  std::set<std::string> paths_;
  std::map<std::string, std::vector<Spec>> specs_;
  std::map<const Module*, bool> effects_;
};

}  // namespace

std::string_view reach_name(Reach r) {
  return kReach[static_cast<int>(r)].name;
}

std::string_view reach_doc(Reach r) {
  return kReach[static_cast<int>(r)].doc;
}

ReachBits case_reach(const Case& c) {
  return ReachWalk(c).run();
}

ReachBits partition_reach(const Program& partitioned) {
  const Module& root = *partitioned.root;
  std::unordered_map<std::string, const Node*> by_name;
  for (Node* n = root.graph.first(); n; n = n->next) by_name[n->name] = n;
  for (Node* call = root.graph.first(); call; call = call->next) {
    if (call->op != NodeOp::kCallModule || !starts_with(call->target, "_run_on_gpu_")) continue;
    auto child = root.children.find(call->target);
    if (child == root.children.end()) continue;
    std::vector<Node*> phs = child->second->graph.placeholders();
    for (size_t i = 0; i < phs.size() && i < call->args.size(); ++i) {
      auto it = by_name.find(phs[i]->name);
      const Node* const* passed = std::get_if<Node*>(&call->args[i]);
      if (it != by_name.end() && passed && it->second != *passed &&
          is_fn(it->second, OpCode::kGetitem))
        return reach_bit(Reach::kTrtCollision);
    }
  }
  return 0;
}

}  // namespace flatcheck

namespace flatcheck {

ReachBits unflatten_reach(const Module& unflattened) {
  ReachBits bits = 0;
  std::vector<const Module*> work{&unflattened};
  std::set<const Module*> seen;
  while (!work.empty() && !bits) {
    const Module* m = work.back();
    work.pop_back();
    if (!seen.insert(m).second) continue;
    std::map<std::string, std::vector<const Module*>> variants;  // base name -> n, n@1, ...
    for (const auto& [name, child] : m->children) {
      variants[strip_variants(name)].push_back(child.get());
      work.push_back(child.get());
    }
    for (const auto& [_, vs] : variants)
      for (size_t i = 0; i < vs.size(); ++i)
        for (size_t j = i + 1; j < vs.size(); ++j)
          if (vs[i] != vs[j] && graph_equal(vs[i]->graph, vs[j]->graph, {false, true, false}) &&
              !graph_equal(vs[i]->graph, vs[j]->graph))
            bits |= reach_bit(Reach::kNestedOnlyUnflattened);
  }
  return bits;
}

}  // namespace flatcheck
