// TextBank, triple indexing and pairwise accuracy: the torch-free half of
// verifier training.
#include <algorithm>

#include "core/error.hpp"
#include "core/log.hpp"
#include "train/verifier_training.hpp"
#include "verify/similarity_map.hpp"

namespace verity::train {

uint32_t TextBank::add(const std::string& text) {
  auto [it, inserted] = ids_.try_emplace(text, uint32_t(texts_.size()));
  if (inserted) {
    texts_.push_back(text);
    tokens_.emplace_back();
    has_tokens_.push_back(0);
  }
  return it->second;
}

void TextBank::set_tokens(uint32_t id, std::vector<float> rows, size_t dim) {
  VERITY_CHECK(id < texts_.size(), ConfigError, "TextBank: text id ", id, " out of range (",
               texts_.size(), " texts)");
  VERITY_CHECK(dim > 0 && rows.size() % dim == 0, ConfigError, "TextBank: ", rows.size(),
               " values are not rows of dim ", dim);
  VERITY_CHECK(dim_ == 0 || dim_ == dim, ConfigError, "TextBank: dim ", dim,
               " differs from the bank's dim ", dim_);
  dim_ = dim;
  tokens_[id] = std::move(rows);
  has_tokens_[id] = 1;
}

size_t TextBank::num_tokens(uint32_t id) const {
  VERITY_CHECK(encoded(id), ConfigError, "TextBank: text ", id, " has no token vectors yet");
  return tokens_[id].size() / dim_;
}

std::span<const float> TextBank::tokens(uint32_t id) const {
  VERITY_CHECK(encoded(id), ConfigError, "TextBank: text ", id, " has no token vectors yet");
  return tokens_[id];
}

void TextBank::encode(const encode::Encoder& encoder, size_t batch_size) {
  std::vector<uint32_t> todo;
  for (uint32_t id = 0; id < texts_.size(); ++id)
    if (!has_tokens_[id]) todo.push_back(id);
  if (todo.empty()) return;
  encode::EncodeOptions options;
  options.batch_size = std::max<size_t>(1, batch_size);
  options.with_tokens = true;
  // Chunks bound the padded [B, T, D] buffer of one encode() call.
  constexpr size_t kChunk = 512;
  Progress progress("encoding texts", todo.size());
  for (size_t begin = 0; begin < todo.size(); begin += kChunk) {
    check_interrupt();
    const size_t end = std::min(todo.size(), begin + kChunk);
    std::vector<std::string> texts;
    for (size_t k = begin; k < end; ++k) texts.push_back(texts_[todo[k]]);
    const auto enc = encoder.encode(texts, options);
    for (size_t k = begin; k < end; ++k) {
      const size_t b = k - begin;
      set_tokens(todo[k], enc.token_block(b), enc.dim);
    }
    progress.add(end - begin);
  }
  progress.finish();
}

std::vector<IndexedTriple> index_triples(std::span<const data::Triple> triples, TextBank& bank) {
  std::vector<IndexedTriple> out;
  out.reserve(triples.size());
  for (const auto& t : triples)
    out.push_back({bank.add(t.query), bank.add(t.positive), bank.add(t.negative), t.type});
  return out;
}

namespace {
double share(const std::pair<size_t, size_t>& correct_total) {
  return correct_total.second ? double(correct_total.first) / double(correct_total.second) : 0.0;
}
}  // namespace

double PairwiseAccuracy::macro() const {
  if (by_type.empty()) return accuracy();
  double sum = 0;
  for (const auto& [type, ct] : by_type) sum += share(ct);
  return sum / double(by_type.size());
}

double PairwiseAccuracy::worst() const {
  if (by_type.empty()) return accuracy();
  double low = 1.0;
  for (const auto& [type, ct] : by_type) low = std::min(low, share(ct));
  return low;
}

double PairwiseAccuracy::select(const std::string& metric) const {
  if (metric == "micro") return accuracy();
  if (metric == "macro") return macro();
  if (metric == "min") return worst();
  throw ConfigError(cat("dev metric '", metric, "' is unknown (valid: micro, macro, min)"));
}

PairwiseAccuracy pairwise_accuracy(const verify::Verifier& verifier, const TextBank& bank,
                                   std::span<const IndexedTriple> triples) {
  PairwiseAccuracy acc;
  constexpr size_t kChunk = 256;
  for (size_t begin = 0; begin < triples.size(); begin += kChunk) {
    check_interrupt();
    const size_t end = std::min(triples.size(), begin + kChunk);
    std::vector<verify::SimilarityMap> maps;
    maps.reserve(2 * (end - begin));
    for (size_t k = begin; k < end; ++k) {
      const auto& t = triples[k];
      maps.push_back(verify::SimilarityMap::compute(bank.tokens(t.query), bank.tokens(t.positive), bank.dim()));
      maps.push_back(verify::SimilarityMap::compute(bank.tokens(t.query), bank.tokens(t.negative), bank.dim()));
    }
    const auto scores = verifier.score_batch(maps);
    for (size_t k = begin; k < end; ++k) {
      const bool right = scores[2 * (k - begin)] > scores[2 * (k - begin) + 1];
      auto& slot = acc.by_type[triples[k].type.empty() ? "untyped" : triples[k].type];
      slot.first += right;
      ++slot.second;
      acc.correct += right;
      ++acc.total;
    }
  }
  return acc;
}

std::vector<std::string> loss_names() { return {"pairwise", "margin", "mnrl"}; }

}  // namespace verity::train
