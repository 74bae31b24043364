#pragma once
// JSON form of a geometry report, shared by `verity geometry` and
// `verity experiment` (a detail header: nlohmann/json stays out of public
// ones).
#include <nlohmann/json.hpp>

#include "diagnose/geometry.hpp"

namespace verity::diagnose::detail {

inline nlohmann::json geometry_type_json(const TypeGeometry &g) {
  nlohmann::json j = {{"count", g.count},
                      {"cos_edit", {{"mean", g.cos_edit.mean}, {"std", g.cos_edit.std}}},
                      {"cos_paraphrase", {{"mean", g.cos_paraphrase.mean}, {"std", g.cos_paraphrase.std}}},
                      {"probed", g.probed}};
  if (g.probed)
    j.update({{"probe_accuracy", g.probe_accuracy},
              {"probe_train_accuracy", g.probe_train_accuracy},
              {"train_pairs", g.train_pairs},
              {"test_pairs", g.test_pairs},
              {"silhouette", g.silhouette},
              {"silhouette_points", g.silhouette_points}});
  return j;
}

inline nlohmann::json geometry_json(const GeometryReport &r) {
  nlohmann::json types = nlohmann::json::object();
  for (const auto &t : r.by_type) types[t.type] = geometry_type_json(t);
  return {{"dim", r.dim},
          {"all", geometry_type_json(r.all)},
          {"by_type", types},
          {"features",
           "[e_q - e_x, e_q * e_x], standardized; silhouette on "
           "e_q - e_x (Euclidean)"}};
}

}  // namespace verity::diagnose::detail
