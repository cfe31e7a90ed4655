// The flag table (harness/cli/flags.def): the parser, strict numbers and the generated help.
#include <charconv>
#include <cstring>
#include <sstream>

#include "harness/cli/cli.h"

namespace flatcheck::cli {
namespace {

const std::vector<FlagSpec>& flag_specs() {
  static const std::vector<FlagSpec> specs = {
#define COMMAND(id, name, synopsis, doc, footer)
#define FLAG(cmd, name, alias, meta, help) {#cmd, name, alias, meta, help},
#include "harness/cli/flags.def"
#undef FLAG
#undef COMMAND
  };
  return specs;
}

// "12" but not "012", "+12", " 12", "12x" or "" (and "-12" only when `sign` is allowed).
bool decimal_token(std::string_view t, bool sign) {
  std::string_view d = t;
  if (sign && !d.empty() && d[0] == '-') d.remove_prefix(1);
  if (d.empty() || d.find_first_not_of("0123456789") != std::string_view::npos) return false;
  return d.size() == 1 || d[0] != '0';
}

// "flatcheck NAME SYNOPSIS" broken before a '[' so no line passes 92 columns; continuation
// lines are indented under the synopsis.
std::string usage_line(const char* indent, std::string_view name, std::string_view synopsis) {
  std::string head = std::string(indent) + "flatcheck " + std::string(name) + " ";
  std::string out = head, pad(head.size(), ' ');
  size_t col = head.size(), i = 0;
  while (i < synopsis.size()) {
    size_t next = synopsis.find(" [", i + 1);
    // A bracket group ends at its matching ']' (groups nest: [--predicate CMD [--timeout S]]).
    size_t end = next == std::string_view::npos ? synopsis.size() : next;
    std::string_view piece = synopsis.substr(i, end - i);
    if (col + piece.size() > 92 && col > head.size()) {
      out += "\n" + pad;
      col = pad.size();
      if (!piece.empty() && piece[0] == ' ') piece.remove_prefix(1);
    }
    out += piece;
    col += piece.size();
    i = end;
  }
  return out + "\n";
}

// `text` as lines of at most 92 columns, the first starting at column `first`, the others
// indented by `indent` spaces.
std::string wrap(std::string_view text, size_t first, size_t indent) {
  std::string out;
  size_t col = first;
  std::istringstream words{std::string(text)};
  std::string w;
  bool start = true;
  while (words >> w) {
    if (!start && col + 1 + w.size() > 92) {
      out += "\n" + std::string(indent, ' ');
      col = indent;
    } else if (!start) {
      out += ' ';
      ++col;
    }
    out += w;
    col += w.size();
    start = false;
  }
  return out;
}

}  // namespace

const std::vector<CommandSpec>& command_specs() {
  static const std::vector<CommandSpec> specs = {
#define COMMAND(id, name, synopsis, doc, footer) {#id, name, synopsis, doc, footer},
#define FLAG(cmd, name, alias, meta, help)
#include "harness/cli/flags.def"
#undef FLAG
#undef COMMAND
  };
  return specs;
}

std::vector<FlagSpec> flags_of(std::string_view command) {
  std::vector<FlagSpec> out;
  for (const auto& c : command_specs()) {
    if (command != c.name) continue;
    for (const auto& f : flag_specs())
      if (std::strcmp(f.command, c.id) == 0) out.push_back(f);
  }
  return out;
}

bool parse_decimal(std::string_view text, int64_t& out) {
  if (!decimal_token(text, /*sign=*/true)) return false;
  auto r = std::from_chars(text.data(), text.data() + text.size(), out);
  return r.ec == std::errc() && r.ptr == text.data() + text.size();
}

bool parse_decimal(std::string_view text, uint64_t& out) {
  if (!decimal_token(text, /*sign=*/false)) return false;
  auto r = std::from_chars(text.data(), text.data() + text.size(), out);
  return r.ec == std::errc() && r.ptr == text.data() + text.size();
}

std::string command_help(std::string_view command) {
  const CommandSpec* spec = nullptr;
  for (const auto& c : command_specs())
    if (command == c.name) spec = &c;
  if (!spec) return "";
  std::ostringstream os;
  std::string lead = "flatcheck " + std::string(spec->name) + ": ";
  os << lead << wrap(spec->doc, lead.size(), 0) << "\n\n"
     << usage_line("usage: ", spec->name, spec->synopsis);
  auto flags = flags_of(command);
  std::vector<std::string> heads;
  size_t width = 0;
  for (const auto& f : flags) {
    std::string h = f.name;
    if (*f.alias) h += std::string(", ") + f.alias;
    if (*f.meta) h += std::string(" ") + f.meta;
    width = std::max(width, h.size());
    heads.push_back(h);
  }
  if (!flags.empty()) os << "\n";
  for (size_t i = 0; i < flags.size(); ++i)
    os << "  " << heads[i] << std::string(width + 2 - heads[i].size(), ' ')
       << wrap(flags[i].help, width + 4, width + 4) << "\n";
  if (*spec->footer) os << "\n" << wrap(spec->footer, 0, 0) << "\n";
  return os.str();
}

std::string main_usage() {
  std::ostringstream os;
  os << "flatcheck: property-based fuzzing and differential testing of the passes a\n"
        "deep-learning compiler runs when it saves a partitioned model.\n\nusage:\n";
  for (const auto& c : command_specs()) os << usage_line("  ", c.name, c.synopsis);
  os << "  flatcheck help | --help | --version\n\n"
        "every command: --limit KEY=VALUE[,...]   load limits for the files it reads "
        "(docs/hardening.md)\n\n"
        "exit codes: 0 nothing found / all passed, 1 a failure found (its minimized repro "
        "written),\n"
        "            2 bad usage or bad input, 3 a system failure (fork, pipe, a full disk).\n"
        "Run 'flatcheck COMMAND --help' for a command's flags. Docs: docs/cli.md.\n";
  return os.str();
}

Args::Args(int argc, char** argv, int start, std::string_view command) {
  auto specs = flags_of(command);
  auto lookup = [&](const std::string& n) -> const FlagSpec* {
    for (const auto& f : specs)
      if (n == f.name || (*f.alias && n == f.alias)) return &f;
    return nullptr;
  };
  for (int i = start; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      for (++i; i < argc; ++i) positional_.push_back(argv[i]);
      break;
    }
    bool option = a.size() > 1 && a[0] == '-' && !std::isdigit(static_cast<unsigned char>(a[1]));
    if (!option) {
      positional_.push_back(a);
      continue;
    }
    std::string name = a, value;
    bool has_value = false;
    if (auto eq = a.find('='); eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
      has_value = true;
    }
    if (name == "--help") {
      if (has_value) throw UsageError("--help takes no value");
      set_.insert(name);
      continue;
    }
    const FlagSpec* f = lookup(name);
    if (!f)
      throw UsageError("unknown option '" + name + "' for '" + std::string(command) +
                       "' (see 'flatcheck " + std::string(command) + " --help')");
    if (!*f->meta) {
      if (has_value) throw UsageError(name + " takes no value");
      set_.insert(f->name);
      continue;
    }
    if (!has_value) {
      if (i + 1 >= argc) throw UsageError(name + " needs a value");
      value = argv[++i];
    }
    values_[f->name] = value;
  }
}

int64_t Args::integer(const std::string& n, int64_t def, int64_t lo, int64_t hi) const {
  if (!has(n)) return def;
  std::string v = str(n);
  int64_t x = 0;
  if (!parse_decimal(v, x) || x < lo || x > hi)
    throw UsageError(n + " expects a decimal integer in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "], got '" + v + "'");
  return x;
}

uint64_t Args::unsigned_int(const std::string& n, uint64_t def) const {
  if (!has(n)) return def;
  std::string v = str(n);
  uint64_t x = 0;
  if (!parse_decimal(v, x))
    throw UsageError(n + " expects a non-negative decimal integer without leading zeros, got '" +
                     v + "'");
  return x;
}

double Args::number(const std::string& n, double def, double lo, double hi) const {
  if (!has(n)) return def;
  std::string v = str(n);
  double x = 0;
  // Plain decimal notation only: digits, one point, an exponent (no hex, inf or nan).
  bool plain = !v.empty() && v.find_first_not_of("0123456789.eE+-") == std::string::npos &&
               (std::isdigit(static_cast<unsigned char>(v[0])) || v[0] == '.');
  auto r = std::from_chars(v.data(), v.data() + v.size(), x);
  if (!plain || r.ec != std::errc() || r.ptr != v.data() + v.size() || !(x >= lo && x <= hi))
    throw UsageError(n + " expects a decimal number in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "], got '" + v + "'");
  return x;
}

}  // namespace flatcheck::cli
