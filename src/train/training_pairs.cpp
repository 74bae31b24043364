#include "train/training_pairs.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <random>

#include "core/error.hpp"
#include "core/io.hpp"

namespace verity::train {
namespace {

// Seeded sample of `count` items (all when count == 0 or >= size), in a shuffled order.
template <typename T>
std::vector<T> sample(std::vector<T> items, size_t count, std::mt19937_64& rng) {
  std::shuffle(items.begin(), items.end(), rng);
  if (count && count < items.size()) items.resize(count);
  return items;
}

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    size_t j = i;
    while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j]))) ++j;
    if (j > i) words.emplace_back(text, i, j - i);
    i = j;
  }
  return words;
}

std::string join(const std::vector<std::string>& words, size_t begin, size_t end) {
  std::string out;
  for (size_t i = begin; i < end; ++i) out += (i > begin ? " " : "") + words[i];
  return out;
}

}  // namespace

std::vector<data::Triple> title_body_triples(const data::Corpus& corpus, uint64_t seed, size_t max_pairs) {
  std::vector<size_t> usable;
  for (size_t i = 0; i < corpus.size(); ++i)
    if (!corpus.docs[i].title.empty() && !corpus.docs[i].text.empty()) usable.push_back(i);
  VERITY_CHECK(usable.size() >= 2, ConfigError, corpus.path, ": fewer than 2 documents with a title and a text");
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ULL + 11);
  std::vector<data::Triple> out;
  for (size_t i : sample(usable, max_pairs, rng)) {
    std::uniform_int_distribution<size_t> pick(0, usable.size() - 2);
    size_t j = usable[pick(rng)];
    if (j == i) j = usable.back();  // uniform over the others
    data::Triple t;
    t.query = corpus.docs[i].title;
    t.positive = corpus.docs[i].text;
    t.negative = corpus.docs[j].text;
    t.type = "title_body";
    t.source = "random";
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<data::Triple> cropping_triples(std::span<const std::string> documents, const CropOptions& o) {
  VERITY_CHECK(o.chunk_words >= 2 && o.min_chunk_words >= 2 && o.min_chunk_words <= o.chunk_words, ConfigError,
               "crop: chunk words ", o.chunk_words, " / min chunk words ", o.min_chunk_words,
               " must satisfy 2 <= min <= chunk");
  VERITY_CHECK(o.min_ratio > 0 && o.min_ratio <= o.max_ratio && o.max_ratio <= 1, ConfigError,
               "crop: span ratios [", o.min_ratio, ", ", o.max_ratio, "] must satisfy 0 < min <= max <= 1");
  std::vector<std::vector<std::string>> chunks;
  for (const auto& doc : documents) {
    const auto words = split_words(doc);
    for (size_t b = 0; b < words.size(); b += o.chunk_words) {
      const size_t e = std::min(words.size(), b + o.chunk_words);
      if (e - b >= o.min_chunk_words) chunks.emplace_back(words.begin() + long(b), words.begin() + long(e));
    }
  }
  VERITY_CHECK(chunks.size() >= 2, ConfigError, "crop: fewer than 2 chunks of at least ", o.min_chunk_words,
               " words");
  std::mt19937_64 rng(o.seed * 0x9e3779b97f4a7c15ULL + 13);
  auto crop = [&](const std::vector<std::string>& c) {
    std::uniform_real_distribution<double> ratio(o.min_ratio, o.max_ratio);
    const size_t len = std::clamp<size_t>(size_t(std::lround(ratio(rng) * double(c.size()))), 1, c.size());
    std::uniform_int_distribution<size_t> start(0, c.size() - len);
    const size_t s = start(rng);
    return join(c, s, s + len);
  };
  std::vector<size_t> ids(chunks.size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = i;
  std::vector<data::Triple> out;
  for (size_t i : sample(ids, o.max_pairs, rng)) {
    std::uniform_int_distribution<size_t> pick(0, chunks.size() - 2);
    size_t j = pick(rng);
    if (j >= i) ++j;  // uniform over the other chunks
    data::Triple t;
    t.query = crop(chunks[i]);
    t.positive = crop(chunks[i]);
    t.negative = crop(chunks[j]);
    t.type = "crop";
    t.source = "random";
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<std::string> read_text_files(const std::string& dir) {
  VERITY_CHECK(is_directory(dir), ConfigError, dir, ": not a directory");
  std::vector<std::string> paths;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file()) paths.push_back(e.path().string());
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> out;
  for (const auto& p : paths) out.push_back(read_file(p));
  return out;
}

std::map<std::string, size_t> type_counts(std::span<const data::Triple> triples) {
  std::map<std::string, size_t> by_type;
  for (const auto& t : triples) ++by_type[t.type.empty() ? "untyped" : t.type];
  return by_type;
}

MixResult mix_triples(std::span<const data::Triple> standard, std::span<const data::Triple> structural,
                      const MixOptions& o) {
  VERITY_CHECK(o.ratio >= 0 && o.ratio <= 1, ConfigError, "mix: ratio ", o.ratio, " must be in [0, 1]");
  const size_t total = o.total ? o.total : standard.size();
  const auto n_struct = size_t(std::llround(o.ratio * double(total)));
  const size_t n_std = total - n_struct;
  VERITY_CHECK(n_std <= standard.size(), ConfigError, "mix: the budget needs ", n_std,
               " standard triples, the standard file has ", standard.size());
  VERITY_CHECK(n_struct <= structural.size(), ConfigError, "mix: ratio ", o.ratio, " of ", total, " needs ",
               n_struct, " structural triples, the structural file has ", structural.size());
  std::mt19937_64 rng(o.seed * 0x9e3779b97f4a7c15ULL + 17);
  MixResult r;
  auto take = [&](std::span<const data::Triple> from, size_t count) {
    std::vector<size_t> ids(from.size());
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = i;
    std::shuffle(ids.begin(), ids.end(), rng);
    for (size_t k = 0; k < count; ++k) r.triples.push_back(from[ids[k]]);
  };
  take(standard, n_std);
  take(structural, n_struct);
  r.standard = n_std;
  r.structural = n_struct;
  std::shuffle(r.triples.begin(), r.triples.end(), rng);
  for (auto& t : r.triples) t.line = 0;
  r.by_type = type_counts(r.triples);
  return r;
}

}  // namespace verity::train
