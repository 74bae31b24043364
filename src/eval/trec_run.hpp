#pragma once
// TREC run files: one line per retrieved document, "qid Q0 docid rank score tag",
// fields separated by whitespace (trec_eval's format).
#include <string>

#include "eval/metrics.hpp"

namespace verity::eval {

// Writes the run atomically: queries in id order, each ranked by the rule of
// rank_in_place (score descending, ties by doc id descending) with 1-based ranks.
// Scores are written in the shortest form that reads back to the same double.
// Ids and the tag must be non-empty and free of whitespace (FormatError otherwise).
void write_trec_run(const std::string& path, const Run& run, const std::string& tag);

// Reads a run file. Every line needs exactly 6 whitespace-separated fields, an integer
// rank and a finite numeric score; a document listed twice for one query is an error.
// Errors are FormatErrors naming the file and line. The second and sixth fields are not
// interpreted. Blank lines follow data/lines.hpp (trailing ones are ignored).
Run read_trec_run(const std::string& path);

}  // namespace verity::eval
