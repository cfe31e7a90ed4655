// Dotted names: module paths ("a.b"), call keys ("n@1") and provenance keys ("n@1/add").
// Every place that builds or takes one apart goes through these helpers.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace flatcheck {

// "a" + "b" -> "a.b"; an empty prefix gives the name alone ("" + "b" -> "b").
std::string join_fqn(std::string_view prefix, std::string_view name);

// "a.b.c" -> {"a", "b", "c"}; "" -> {}.
std::vector<std::string> split_fqn(std::string_view fqn);

// The call key of the `index`-th call of `fqn`: "n" for the first, "n@1" for the second.
std::string call_key(const std::string& fqn, int index);

// The provenance key of a node `name` inside the call `key` ("" at the root): "n@1/add".
std::string origin_key(const std::string& key, const std::string& name);

// Call variants of one module count as the same FQN: "a@1.b@2" -> "a.b".
std::string strip_variants(std::string_view path);

// True for a variant child name "n@<digits>"; false for a plain name and for "n@", "n@x".
bool is_variant_name(std::string_view name);

}  // namespace flatcheck
