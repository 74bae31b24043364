#include "nearmiss/splits.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "core/crc32c.hpp"
#include "core/error.hpp"
#include "nearmiss/text_utils.hpp"

namespace verity::nearmiss {

uint64_t seeded_hash(uint64_t seed, std::string_view text) {
  uint64_t h = fnv1a64(&seed, sizeof seed);
  h = fnv1a64(text.data(), text.size(), h);
  // splitmix64 finalizer: fnv's low bits are weak for ratio bucketing.
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

SplitAssignment assign_splits(std::vector<GroupedTriple> triples, const SplitRatios& r, uint64_t seed) {
  VERITY_CHECK(r.train >= 0 && r.dev >= 0 && r.test >= 0 && std::abs(r.train + r.dev + r.test - 1.0) < 1e-6,
               ConfigError, "split ratios train=", r.train, " dev=", r.dev, " test=", r.test,
               " must be non-negative and sum to 1");
  // Group triples, then visit groups in a seeded order.
  std::unordered_map<std::string, std::vector<size_t>> members;
  std::vector<std::string> groups;
  for (size_t i = 0; i < triples.size(); ++i) {
    auto [it, fresh] = members.try_emplace(triples[i].group);
    if (fresh) groups.push_back(triples[i].group);
    it->second.push_back(i);
  }
  const uint64_t order_seed = seed ^ 0x6f72646572ULL, split_seed = seed ^ 0x73706c6974ULL;
  std::vector<std::pair<uint64_t, std::string>> order;
  order.reserve(groups.size());
  for (auto& g : groups) order.emplace_back(seeded_hash(order_seed, g), g);
  std::sort(order.begin(), order.end());

  SplitAssignment out;
  std::unordered_map<std::string, size_t> owner;  // normalized text -> split
  for (const auto& [_, group] : order) {
    const double u = static_cast<double>(seeded_hash(split_seed, group) >> 11) * 0x1.0p-53;
    const size_t split = u < r.train ? kTrain : (u < r.train + r.dev ? kDev : kTest);
    for (size_t i : members[group]) {
      auto& t = triples[i].triple;
      std::array<std::string, 3> keys = {normalize_sentence(t.query), normalize_sentence(t.positive),
                                         normalize_sentence(t.negative)};
      bool conflict = false;
      for (const auto& k : keys) {
        auto it = owner.find(k);
        if (it != owner.end() && it->second != split) conflict = true;
      }
      if (conflict) {
        ++out.dropped_cross_split;
        ++out.dropped_cross_split_by_source[t.source];
        continue;
      }
      for (auto& k : keys) owner.emplace(std::move(k), split);
      out.splits[split].push_back(std::move(t));
    }
  }
  return out;
}

void check_disjoint(const std::array<std::vector<data::Triple>, 3>& splits) {
  std::unordered_map<std::string, size_t> owner;
  for (size_t s = 0; s < splits.size(); ++s) {
    for (const auto& t : splits[s]) {
      for (const std::string* text : {&t.query, &t.positive, &t.negative}) {
        auto key = normalize_sentence(*text);
        auto [it, fresh] = owner.emplace(key, s);
        VERITY_CHECK(fresh || it->second == s, Error, "near-miss splits overlap: the sentence \"", *text,
                     "\" is in both ", kSplitNames[it->second], " and ", kSplitNames[s]);
      }
    }
  }
}

size_t cap_per_type(std::vector<data::Triple>& split, size_t cap, uint64_t seed) {
  // type -> source -> triples, each list in seeded order.
  std::map<std::string, std::map<std::string, std::vector<data::Triple>>> by_type;
  for (auto& t : split) by_type[t.type][t.source].push_back(std::move(t));
  const size_t before = split.size();
  split.clear();
  auto key_of = [&](const data::Triple& t) {
    return seeded_hash(seed, t.query + '\x1f' + t.positive + '\x1f' + t.negative);
  };
  for (auto& [type, sources] : by_type) {
    std::vector<std::vector<data::Triple>*> lists;
    for (auto& [_, list] : sources) {
      std::sort(list.begin(), list.end(),
                [&](const data::Triple& a, const data::Triple& b) { return key_of(a) < key_of(b); });
      lists.push_back(&list);
    }
    size_t kept = 0;
    for (size_t round = 0; cap == 0 || kept < cap; ++round) {
      bool any = false;
      for (auto* list : lists) {
        if (round >= list->size() || (cap != 0 && kept >= cap)) continue;
        split.push_back(std::move((*list)[round]));
        ++kept;
        any = true;
      }
      if (!any) break;
    }
  }
  std::sort(split.begin(), split.end(), [&](const data::Triple& a, const data::Triple& b) {
    return key_of(a) < key_of(b);
  });
  return before - split.size();
}

}  // namespace verity::nearmiss
