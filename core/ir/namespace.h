// A graph's namespace, with torch.fx's rules for creating node names: `_Namespace.create_name`
// of current PyTorch (torch/fx/graph.py as torch 2.14.1 has it, after PyTorch #177217: the
// version with `_base_count` and `_illegal_names`), called with obj=None as Graph.create_node
// does. docs/torch.md lists the deliberate differences and the earlier versions.
//
//   create_name("getitem")   -> "getitem"      first use
//   create_name("getitem")   -> "getitem_1"    collision: the base's count, then the next free
//   create_name("getitem_1") -> "getitem_2"    a used candidate with a suffix counts up from
//                                              its base's count (1 here), skipping used names
//   create_name("max_2"), create_name("max_2") -> "max_2", "max_3"
//   create_name("sum")       -> "sum_1"        Python builtins, keywords and torch.fx's custom
//   create_name("input")     -> "input_1"      builtins are never node names
//   create_name("a..b")      -> "a_b"          a run of illegal characters becomes one _
//   create_name("0x")        -> "_0x"          a leading digit gets a _ prefix
//   create_name("")          -> "_unnamed"
//
// Names derived from a target (no explicit name) go through target_to_str first, as
// torch.fx's Graph._target_to_str: "__add__" -> "add", "getItem" -> "get_item".
// Names are never released: an erased node's name stays reserved for the life of the graph.
// Creating a name is amortized O(1), suffixed candidates included: each base keeps an index of
// its used numeric suffixes with path compression, so "the next free number from k" never
// scans the numbers already taken. A copy of a namespace shares its tables until either writes.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace flatcheck {

class Namespace {
 public:
  // Returns a fresh, legal name derived from `candidate` and marks it used.
  std::string create_name(std::string_view candidate);
  // True when `name` has been handed out (or reserved) in this namespace.
  bool contains(std::string_view name) const;
  // Marks an exact name as used (it must be legal and free); returns false if taken.
  bool reserve(const std::string& name);
  // Releases a name. Only injected faults call this (`erased-name-reuse`, `reload-renames`).
  void release(const std::string& name);
  size_t size() const { return table_ ? table_->used : 0; }

 private:
  // What the namespace knows of one string: whether it is a used name, and its count as a base
  // (torch.fx's _base_count) when it has one. One entry serves both lookups of create_name.
  struct Entry {
    bool used = false;
    bool counted = false;
    int64_t count = 0;
  };
  // Flat, open-addressed tables (no allocation per name): every string the namespace knows
  // (used names and bases) is an item, found through `slots`; the suffix index is keyed by
  // (base item, j).
  struct Item {
    std::string text;
    size_t hash;
    Entry e;
  };
  // Per base, the used canonical suffixes j ("<base>_<j>" without leading zeros), each mapped
  // to a j' > j such that every suffix in [j, j') is used (union-find with path compression).
  struct Taken {
    uint32_t base = 0;  // the base's item + 1; 0: an empty slot
    int64_t j = 0;
    int64_t next = 0;
  };
  struct Table {
    std::vector<Item> items;
    std::vector<uint32_t> slots;  // item + 1; 0: empty (size a power of two, or 0)
    size_t used = 0;              // items with `used` set
    std::vector<Taken> taken;     // size a power of two, or 0
    size_t taken_count = 0;

    static constexpr uint32_t kNone = UINT32_MAX;
    uint32_t find(std::string_view s, size_t h) const;
    uint32_t find(std::string_view s) const { return find(s, hash_of(s)); }
    uint32_t intern(std::string_view s) { return intern(s, hash_of(s)); }
    uint32_t intern(std::string_view s, size_t h);  // the item of `s`, made when missing
    Taken* find_taken(uint32_t base, int64_t j);
    void add_taken(uint32_t base, int64_t j, int64_t next);  // unless (base, j) is there
    static size_t hash_of(std::string_view s) { return std::hash<std::string_view>()(s); }
  };

  // The table, for writing: a copy of the namespace shares its table until either one writes
  // (a graph copied to be run never copies its names).
  Table& writable();
  static void mark_used(Table& t, std::string_view name);
  // The same for a name create_name made: `base` and `j` are its split (j < 0: not suffixed, or
  // not canonically), `base_item` the base's item; `h` is the name's hash.
  static void mark_used(Table& t, std::string_view name, size_t h, uint32_t base_item, int64_t j);
  static bool used_in(const Table& t, std::string_view name);
  // The smallest j >= k such that "<base>_<j>" is not used (b: the base's item).
  static int64_t next_free(Table& t, uint32_t b, int64_t k);

  std::shared_ptr<Table> table_;
};

// torch.fx's `_snake_case`: "_" before an upper-case letter that follows a lower-case one,
// then lower case: "MyModule" -> "my_module", "ALL_CAPS" -> "all_caps".
std::string snake_case(std::string_view s);

// torch.fx's Graph._target_to_str for a string target: "__add__" -> "add" (magic names lose
// their underscores), then snake_case.
std::string target_to_str(std::string_view target);

// torch.export's name for a placeholder (placeholder_naming_pass, torch/_export/utils.py, as
// non-strict export runs it): the candidate ("p_" / "b_" + a state FQN, or a user input's name)
// lower-cased, each character outside [a-z0-9] made '_' ("X" -> "x", "p_convBlock.W" ->
// "p_convblock_w").
std::string export_mangle(std::string_view candidate);

// The placeholder names of one export, in the order torch names them (user inputs, then state),
// as current PyTorch's _rename_without_collisions gives them (torch 2.14.1; torch 2.6 differs,
// docs/torch.md): a mangled candidate `ns` already holds becomes "<candidate>_<k+1>", k its
// count. Every name handed out is read as Python's re.match(r"(.*)_(\d+)") reads it (the last
// '_' followed by a digit, then that digit run) and raises the count of what precedes to that
// number: "p_0_w_2" raises "p_0_w" to 2, so a taken "p_0_w" becomes "p_0_w_3" (torch 2.6:
// "p_0_w_1", the first free); "p_a_1_x" raises "p_a" to 1. A candidate's own digits are not
// parsed (a taken "x_1" -> "x_1_1"). name() does not mark the name used in `ns`.
class ExportPlaceholderNames {
 public:
  std::string name(const Namespace& ns, std::string_view candidate);

 private:
  // base -> the largest count seen, as decimal digits without leading zeros ("" is 0)
  std::unordered_map<std::string, std::string> count_;
};

// Whether `s` is an identifier ([A-Za-z_][A-Za-z0-9_]*): sanitize_name leaves exactly these
// unchanged.
bool is_identifier(std::string_view s);

// Whether `s` is a child module name: [A-Za-z0-9_]+ ("layer0", nn.Sequential's "0"); '.' joins
// paths, '@' names call variants ("n@1") and '/' provenance keys ("n@1/add").
bool is_module_name(std::string_view s);

// The candidate torch.fx would parse: itself when it is an identifier ([A-Za-z_][A-Za-z0-9_]*);
// otherwise each run of characters outside [A-Za-z0-9_] becomes one '_', "" becomes
// "_unnamed", and a leading digit gets a '_' prefix.
std::string sanitize_name(std::string_view s);

// True for names torch.fx never hands out for a node: Python 3.11's keywords and builtins
// (builtins.__dict__ with the site module's additions) and torch.fx's custom builtins (inf, nan,
// NoneType, torch, device, fx_pytree, pytree). "None" is not refused: current torch.fx maps it
// to the value None, which its check cannot tell from "no object" (docs/torch.md).
bool is_reserved_name(std::string_view s);

// Splits a name with a numeric suffix ("sum_12") into its base ("sum") and digits ("12"); false
// when it has none (no '_', nothing before it, a non-digit after it, or more than 18 digits).
bool split_suffix(std::string_view s, std::string_view* base, std::string_view* digits);

}  // namespace flatcheck
