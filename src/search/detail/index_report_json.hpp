#pragma once
// The JSON object `verity index --json` prints, shared with the Python
// module's verity.build_index (a detail header: nlohmann/json stays out of
// public ones).
#include <nlohmann/json.hpp>
#include <string>

#include "search/index_builder.hpp"

namespace verity::search::detail {

inline nlohmann::json index_report_json(const std::string& out_dir, const IndexBuildOptions& o,
                                        const IndexBuildReport& r) {
  nlohmann::json parts = nlohmann::json::array();
  for (auto [on, name] : {std::pair{o.bm25, "bm25"}, {o.dense, "dense"}, {o.tokens, "tokens"}})
    if (on) parts.push_back(name);
  return {{"index", out_dir},
          {"docs", r.docs},
          {"parts", parts},
          {"token_vectors", r.token_vectors},
          {"seconds", r.seconds},
          {"encode_seconds", r.encode_seconds}};
}

}  // namespace verity::search::detail
