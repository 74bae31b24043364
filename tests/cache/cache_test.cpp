// The cache end to end on models/use-lite (required when VERITY_REQUIRE_MODELS is
// set, skipped otherwise): the decision rule's stages, replacement, expiry, LRU
// caps, reopen, namespaces and concurrent writers.
#include "cache/cache.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "cache_fixture.hpp"
#include "core/error.hpp"
#include "verify/verifier.hpp"

using namespace verity;
using namespace verity::cache;
namespace fs = std::filesystem;

namespace {
class CacheTest : public verity_test::CacheFixture {
 protected:
  static CacheOptions options() {
    auto o = CacheFixture::options();
    o.cosine_floor = -1;  // every candidate reaches the verifier
    return o;
  }
};

const std::string kCapital = "What is the capital city of France?";
const std::string kParaphrase = "Which city is the capital of France?";
const std::string kUnrelated = "How do I bake sourdough bread at home?";
}  // namespace

TEST_F(CacheTest, ExactTextIsAHitAndAPutAgainReplacesTheEntry) {
  Cache c(db(), options());
  auto first = c.put(kCapital, "Paris");
  EXPECT_FALSE(first.replaced);
  auto r = c.lookup(kCapital);
  ASSERT_TRUE(r.hit);
  EXPECT_EQ(r.reason, "exact");
  EXPECT_EQ(r.best->entry.id, first.id);
  EXPECT_EQ(r.timings.encode_ms, 0.0);  // the exact path does not encode
  auto again = c.put(kCapital, "Paris, France", {kDefaultNamespace, R"({"model":"x"})", std::nullopt});
  EXPECT_TRUE(again.replaced);
  EXPECT_EQ(again.id, first.id);
  r = c.lookup(kCapital);
  EXPECT_EQ(r.best->entry.response, "Paris, France");
  EXPECT_EQ(r.best->entry.metadata, R"({"model":"x"})");
  EXPECT_EQ(c.stats().entries, 1u);
}

// A prompt already stored in its namespace, or met earlier in the same batch,
// is not encoded again: its vectors are reused, and a paraphrase then scores
// against them exactly as against freshly encoded ones.
TEST_F(CacheTest, APromptPutAgainReusesItsStoredVectors) {
  Cache fresh(db() + ".fresh", options());
  fresh.put(kCapital, "Paris");
  const auto expected = fresh.lookup(kParaphrase, {kDefaultNamespace, 0.0f});
  ASSERT_TRUE(expected.best.has_value());
  EXPECT_EQ(fresh.stats().reused_vectors, 0u);

  Cache c(db(), options());
  c.put(kCapital, "Paris");
  EXPECT_EQ(c.stats().reused_vectors, 0u);
  c.put(kCapital, "Paris, France");  // stored: reused
  EXPECT_EQ(c.stats().reused_vectors, 1u);
  c.put(kCapital, "Paris", {"other", "{}", std::nullopt});  // another namespace: encoded
  EXPECT_EQ(c.stats().reused_vectors, 1u);
  std::vector<PutRequest> batch = {{kUnrelated, "a", {}}, {kUnrelated, "b", {}}};
  const auto results = c.put_batch(batch);
  EXPECT_EQ(c.stats().reused_vectors, 2u);  // the second copies the first
  EXPECT_EQ(results[0].id, results[1].id);
  EXPECT_TRUE(results[1].replaced);
  const auto r = c.lookup(kParaphrase, {kDefaultNamespace, 0.0f});
  ASSERT_TRUE(r.best.has_value());
  EXPECT_EQ(r.best->entry.response, "Paris, France");
  EXPECT_FLOAT_EQ(r.best->similarity, expected.best->similarity);
  EXPECT_FLOAT_EQ(*r.best->probability, *expected.best->probability);
  EXPECT_EQ(c.lookup(kUnrelated).best->entry.response, "b");
}

TEST_F(CacheTest, EachStageOfTheDecisionRule) {
  Cache c(db(), options());
  EXPECT_EQ(c.lookup(kCapital).reason, "empty");
  auto id = c.put(kCapital, "Paris").id;
  c.put(kUnrelated, "Flour, water, salt, starter.");

  // Threshold 0: whatever the verifier says, the best candidate is served.
  LookupOptions any;
  any.min_probability = 0.0f;
  auto r = c.lookup(kParaphrase, any);
  ASSERT_TRUE(r.hit) << r.reason;
  EXPECT_EQ(r.reason, "verified");
  EXPECT_EQ(r.best->entry.id, id);
  EXPECT_EQ(r.threshold_source, "request");
  ASSERT_TRUE(r.best->probability);
  EXPECT_GT(r.best->similarity, 0.5f);
  EXPECT_GT(r.timings.encode_ms, 0.0);

  // Above any score: the best candidate loses and is reported.
  LookupOptions none;
  none.min_probability = 2.0f;
  r = c.lookup(kParaphrase, none);
  EXPECT_FALSE(r.hit);
  EXPECT_EQ(r.reason, "below_threshold");
  ASSERT_TRUE(r.best);
  EXPECT_EQ(r.best->entry.id, id);

  // Without a request threshold: the verifier's calibrated one, else the fallback.
  r = c.lookup(kParaphrase);
  auto calibrated = c.verifier().default_threshold();
  EXPECT_EQ(r.threshold_source, calibrated ? "verifier" : "fallback");
  EXPECT_FLOAT_EQ(r.threshold, calibrated ? *calibrated : kFallbackThreshold);
  EXPECT_EQ(c.stats().threshold_source, r.threshold_source);

  // A floor above every cosine: nothing is verified, the nearest is reported.
  auto o = options();
  o.cosine_floor = 0.999f;
  o.check = "none";
  Cache floored((dir_ / "floored.sqlite").string(), o);
  floored.put(kCapital, "Paris");
  r = floored.lookup(kParaphrase, any);
  EXPECT_FALSE(r.hit);
  EXPECT_EQ(r.reason, "below_cosine_floor");
  ASSERT_TRUE(r.best);
  EXPECT_FALSE(r.best->probability);
}

// A prompt the same on the surface as a cached one (case, spacing,
// apostrophes and sentence punctuation aside) is verified whatever its
// cosine, which case alone pulls under the floor here; the default
// verifier's surface floor then serves it. The surface index follows
// removal and reopening.
TEST_F(CacheTest, ASurfaceVariantIsVerifiedBelowTheCosineFloor) {
  auto o = CacheFixture::options();
  o.verifier = "default";
  const std::string cached = "Marguerite: Well, maybe later.", shouted = "MARGUERITE WELL MAYBE LATER";
  int64_t id = 0;
  {
    Cache c(db(), o);
    id = c.put(cached, "Marguerite's answer").id;
    c.put(kUnrelated, "bread");
    auto r = c.lookup(shouted);
    EXPECT_TRUE(r.hit) << r.reason;
    EXPECT_EQ(r.reason, "verified");
    ASSERT_TRUE(r.best && r.best->probability);
    EXPECT_EQ(r.best->entry.id, id);
    EXPECT_LT(r.best->similarity, o.cosine_floor);  // the ANN path alone would not verify it
    EXPECT_GE(*r.best->probability, *c.verifier().default_threshold());
    // Another word is no surface match: it stays under the floor.
    r = c.lookup("MARGUERITE WELL MAYBE NEVER");
    EXPECT_FALSE(r.hit);
    EXPECT_EQ(r.reason, "below_cosine_floor");
  }
  Cache c(db(), o);  // reopened: the surfaces are read back from the prompts
  EXPECT_TRUE(c.lookup(shouted).hit);
  LookupOptions elsewhere;
  elsewhere.ns = "other";
  EXPECT_FALSE(c.lookup(shouted, elsewhere).hit);
  ASSERT_TRUE(c.remove(id));
  auto r = c.lookup(shouted);
  EXPECT_FALSE(r.hit);
  ASSERT_TRUE(r.best);
  EXPECT_NE(r.best->entry.id, id);
}

TEST_F(CacheTest, ProbeMakesTheSameChoiceAsLookup) {
  Cache c(db(), options());
  std::vector<std::string> prompts = {kCapital, kUnrelated, "How tall is the Eiffel Tower?",
                                      "What is the population of Paris?", "Who painted the Mona Lisa?"};
  for (const auto& p : prompts) c.put(p, "answer to " + p);
  auto cosine_only = std::vector<const verify::Verifier*>{nullptr, &c.verifier()};
  for (const auto& q : {kParaphrase, std::string("Eiffel Tower height in meters"), std::string("Mona Lisa painter")}) {
    LookupOptions any;
    any.min_probability = 0.0f;
    auto r = c.lookup(q, any);
    auto p = c.probe(q, kDefaultNamespace, cosine_only);
    ASSERT_EQ(p.choices.size(), 2u);
    EXPECT_FALSE(p.exact_id);
    ASSERT_TRUE(r.hit);
    EXPECT_EQ(p.choices[1].id, r.best->entry.id) << q;
    EXPECT_FLOAT_EQ(p.choices[1].score, *r.best->probability) << q;
    EXPECT_FLOAT_EQ(p.choices[0].score, p.choices[0].similarity);
  }
  EXPECT_EQ(c.probe(kCapital, kDefaultNamespace, cosine_only).exact_id, c.lookup(kCapital).best->entry.id);
}

TEST_F(CacheTest, ExpiredEntriesAreNeverServed) {
  Cache c(db(), options());
  auto id = c.put(kCapital, "Paris", {kDefaultNamespace, "{}", 0.2}).id;
  c.put(kUnrelated, "bread");
  EXPECT_TRUE(c.lookup(kCapital).hit);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  LookupOptions any;
  any.min_probability = 0.0f;
  EXPECT_FALSE(c.lookup(kCapital).reason == "exact");
  auto r = c.lookup(kParaphrase, any);
  if (r.best) EXPECT_NE(r.best->entry.id, id);
  EXPECT_FALSE(c.get(id));
  // The next commit purges it.
  auto put = c.put("another prompt", "x");
  EXPECT_EQ(put.expired, 1u);
  EXPECT_EQ(c.stats().entries, 2u);
}

TEST_F(CacheTest, CapsEvictTheLeastRecentlyUsed) {
  auto o = options();
  o.max_entries = 2;
  int64_t a, b;
  {
    Cache c(db(), o);
    a = c.put("first prompt", "1").id;
    b = c.put("second prompt", "2").id;
    EXPECT_TRUE(c.lookup("first prompt").hit);  // a is now more recent than b
    auto r = c.put("third prompt", "3");
    EXPECT_EQ(r.evicted, 1u);
    EXPECT_TRUE(c.get(a));
    EXPECT_FALSE(c.get(b));
    EXPECT_EQ(c.stats().evicted, 1u);
    // Namespaces are capped separately.
    c.put("first prompt", "x", {"other", "{}", std::nullopt});
    EXPECT_EQ(c.stats().entries, 3u);
  }
  // Recency survives a reopen: a was last used before the third was put, so a fourth evicts a.
  {
    Cache c(db(), o);
    EXPECT_EQ(c.stats().entries, 3u);
    c.put("fourth prompt", "4");
    EXPECT_FALSE(c.get(a));
  }
  // A byte cap.
  auto ob = options();
  ob.max_bytes = 1;
  Cache tiny((dir_ / "tiny.sqlite").string(), ob);
  EXPECT_THROW(tiny.put("any prompt", "r"), ConfigError);
}

TEST_F(CacheTest, ReopenReloadsOrRebuildsTheSameIndex) {
  std::vector<std::string> prompts;
  for (int i = 0; i < 30; ++i) prompts.push_back("Question number " + std::to_string(i) + " about topic " + std::to_string(i % 7));
  auto o = options();
  o.ann.exact_limit = 8;  // above it: the HNSW graph
  std::vector<ScorerChoice> before;
  std::vector<const verify::Verifier*> cosine{nullptr};
  {
    Cache c(db(), o);
    std::vector<PutRequest> reqs;
    for (const auto& p : prompts) reqs.push_back({p, "r " + p, {}});
    auto results = c.put_batch(reqs, 7);
    ASSERT_EQ(results.size(), prompts.size());
    EXPECT_EQ(c.stats().namespaces.at(0).graph, true);
    for (int i = 0; i < 10; ++i) before.push_back(c.probe("question about topic " + std::to_string(i), kDefaultNamespace, cosine).choices[0]);
  }
  auto same_choices = [&](Cache& c) {
    for (int i = 0; i < 10; ++i) {
      auto now = c.probe("question about topic " + std::to_string(i), kDefaultNamespace, cosine).choices[0];
      EXPECT_EQ(now.id, before[i].id);
      EXPECT_FLOAT_EQ(now.score, before[i].score);
    }
  };
  {
    // Closed cleanly: the saved graph matches the database and is reloaded.
    Cache c(db(), o);
    EXPECT_EQ(c.stats().entries, prompts.size());
    EXPECT_EQ(c.stats().index_source, "reloaded");
    same_choices(c);
  }
  // A graph older than the last commit (as after a crash) or damaged is rebuilt.
  for (const char* damage : {"UPDATE ann_graphs SET generation = generation - 1",
                             "UPDATE ann_graphs SET graph = zeroblob(length(graph))"}) {
    SCOPED_TRACE(damage);
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open(db().c_str(), &h), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(h, damage, nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(h);
    Cache c(db(), o);
    EXPECT_EQ(c.stats().index_source, "rebuilt");
    same_choices(c);
  }
}

TEST_F(CacheTest, NamespacesAreSeparateAndClearable) {
  Cache c(db(), options());
  c.put(kCapital, "Paris", {"a", "{}", std::nullopt});
  LookupOptions in_b;
  in_b.ns = "b";
  in_b.min_probability = 0.0f;
  EXPECT_EQ(c.lookup(kCapital, in_b).reason, "empty");
  EXPECT_EQ(c.clear("a"), 1u);
  LookupOptions in_a;
  in_a.ns = "a";
  EXPECT_FALSE(c.lookup(kCapital, in_a).hit);
  EXPECT_FALSE(c.remove(12345));
}

TEST_F(CacheTest, BadArgumentsAreConfigErrors) {
  Cache c(db(), options());
  EXPECT_THROW(c.put("", "r"), ConfigError);
  EXPECT_THROW(c.put("p", "r", {kDefaultNamespace, "[1]", std::nullopt}), ConfigError);
  EXPECT_THROW(c.put("p", "r", {kDefaultNamespace, "{bad", std::nullopt}), ConfigError);
  EXPECT_THROW(c.put("p", "r", {kDefaultNamespace, "{}", -1.0}), ConfigError);
  EXPECT_THROW(c.put("p", "r", {"", "{}", std::nullopt}), ConfigError);
  EXPECT_THROW(c.lookup(""), ConfigError);
  auto o = options();
  o.encoder = "glove";
  EXPECT_THROW(Cache(db(), o), ConfigError);  // the file records use-lite
}

TEST_F(CacheTest, ConcurrentPutsLookupsAndRemovesStayConsistent) {
  auto o = options();
  o.ann.exact_limit = 16;
  Cache c(db(), o);
  std::atomic<bool> failed{false};
  std::atomic<int> removed{0};
  auto writer = [&](int t) {
    try {
      for (int i = 0; i < 25; ++i) {
        auto r = c.put("writer " + std::to_string(t) + " prompt " + std::to_string(i), "x");
        if (i % 3 == 0) removed += c.remove(r.id);
      }
    } catch (const std::exception& e) {
      failed = true;
      ADD_FAILURE() << e.what();
    }
  };
  auto reader = [&] {
    try {
      LookupOptions any;
      any.min_probability = 0.0f;
      for (int i = 0; i < 40; ++i) {
        auto r = c.lookup("writer prompt " + std::to_string(i), any);
        if (r.hit) EXPECT_TRUE(r.best->entry.prompt.rfind("writer ", 0) == 0);
      }
    } catch (const std::exception& e) {
      failed = true;
      ADD_FAILURE() << e.what();
    }
  };
  std::vector<std::thread> threads;
  threads.emplace_back(writer, 0);
  threads.emplace_back(writer, 1);
  threads.emplace_back(reader);
  threads.emplace_back(reader);
  for (auto& t : threads) t.join();
  ASSERT_FALSE(failed);
  const size_t expected = 50 - size_t(removed.load());
  EXPECT_EQ(c.stats().entries, expected);
  auto reopened_options = o;
  reopened_options.check = "full";
  Cache again((dir_ / "cache.sqlite").string(), reopened_options);
  EXPECT_EQ(again.stats().entries, expected);
}
