#include "harness/ci_report.h"

#include <map>
#include <sstream>

#include "core/serialize/serialize.h"

namespace flatcheck {
namespace {

// A file path as a SARIF artifact URI: relative paths stay relative (resolved against the
// checkout by code-scanning tools), absolute ones become file:// URIs; characters outside the
// URI alphabet are percent-encoded.
std::string file_uri(const std::string& path) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out = !path.empty() && path[0] == '/' ? "file://" : "";
  for (unsigned char ch : path) {
    if (std::isalnum(ch) ||
        std::string_view("/-._~").find(static_cast<char>(ch)) != std::string_view::npos) {
      out += static_cast<char>(ch);
    } else {
      out += '%';
      out += kHex[ch >> 4];
      out += kHex[ch & 15];
    }
  }
  return out;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (unsigned char ch : s) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      case '\n':
      case '\t':
      case '\r':
        out += static_cast<char>(ch);
        break;
      default:
        // XML 1.0 has no other control characters; keep the text readable instead.
        if (ch < 0x20)
          out += '?';
        else
          out += static_cast<char>(ch);
    }
  }
  return out;
}

}  // namespace

std::string sarif_report(const std::vector<ReportItem>& items, const std::string& version,
                         const std::string& command_line) {
  Json rules = Json::array(), results = Json::array();
  std::map<std::string, int> rule_index;
  for (const auto& it : items) {
    if (it.signature.empty()) continue;
    auto [pos, added] = rule_index.emplace(it.signature, static_cast<int>(rules.size()));
    if (added)
      rules.push_back(Json{{"id", it.signature},
                           {"name", "flatcheck/" + it.signature.substr(0, it.signature.find(':'))},
                           {"shortDescription", {{"text", "flatcheck finding " + it.signature}}}});
    Json result = {{"ruleId", it.signature},
                   {"ruleIndex", pos->second},
                   {"level", "error"},
                   {"message",
                    {{"text", it.signature + ": " + it.message +
                                  (it.detail.empty() ? "" : "\n" + it.detail)}}}};
    if (!it.file.empty())
      result["locations"] = Json::array({{{"physicalLocation",
                                           {{"artifactLocation", {{"uri", file_uri(it.file)}}},
                                            {"region", {{"startLine", 1}}}}}}});
    results.push_back(std::move(result));
  }
  Json log = {
      {"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
      {"version", "2.1.0"},
      {"runs",
       Json::array(
           {{{"tool",
              {{"driver", {{"name", "flatcheck"}, {"version", version}, {"rules", rules}}}}},
             {"invocations",
              Json::array({{{"commandLine", command_line}, {"executionSuccessful", true}}})},
             {"results", results}}})}};
  return log.dump(2) + "\n";
}

std::string junit_report(const std::string& suite, const std::vector<ReportItem>& items,
                         double seconds) {
  int failures = 0;
  for (const auto& it : items) failures += !it.signature.empty();
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(3);
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
     << "<testsuites name=\"flatcheck\" tests=\"" << items.size() << "\" failures=\"" << failures
     << "\" errors=\"0\" time=\"" << seconds << "\">\n"
     << "  <testsuite name=\"" << xml_escape(suite) << "\" tests=\"" << items.size()
     << "\" failures=\"" << failures << "\" errors=\"0\" skipped=\"0\" time=\"" << seconds
     << "\">\n";
  for (const auto& it : items) {
    os << "    <testcase classname=\"" << xml_escape(suite) << "\" name=\"" << xml_escape(it.name)
       << "\"";
    if (it.signature.empty()) {
      os << "/>\n";
      continue;
    }
    os << ">\n      <failure type=\"" << xml_escape(it.signature) << "\" message=\""
       << xml_escape(it.signature + ": " + it.message) << "\">"
       << xml_escape((it.file.empty() ? "" : "repro: " + it.file + "\n") + it.detail)
       << "</failure>\n    </testcase>\n";
  }
  os << "  </testsuite>\n</testsuites>\n";
  return os.str();
}

}  // namespace flatcheck
