// Reports for CI systems: SARIF 2.1.0 (code-scanning uploads; one result per finding, its
// signature as the rule id, the repro file as the location) and JUnit XML (one test case per
// finding or per replayed file). `fuzz` and `replay` write them with --sarif and --junit.
#pragma once

#include <string>
#include <vector>

namespace flatcheck {

// One checked item: a campaign's finding, a replayed case file, or a campaign that passed.
struct ReportItem {
  std::string name;       // the test case's name (a file path, "fuzz seed 1: 2000 cases")
  std::string signature;  // the failure's signature; empty when the item passed
  std::string message;    // the failure's details
  std::string file;       // the repro or case file, relative or absolute; may be empty
  std::string detail;     // extra lines for people (case index and seed, first divergence)
};

// A SARIF 2.1.0 log with one run of the tool `flatcheck` at `version`; one result per failed
// item, with one rule per distinct signature.
std::string sarif_report(const std::vector<ReportItem>& items, const std::string& version,
                         const std::string& command_line);

// A JUnit XML document: one <testsuite name=suite> with one <testcase> per item; a failed item
// carries a <failure> with its signature as the type.
std::string junit_report(const std::string& suite, const std::vector<ReportItem>& items,
                         double seconds);

}  // namespace flatcheck
