// verity encode: pooled (and optionally per-token) vectors for JSONL texts.
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "core/io.hpp"
#include "core/log.hpp"
#include "encode/registry.hpp"

namespace verity::cli {
namespace {

struct EncodeArgs {
  CommonFlags common;
  std::string model = "use-lite", input, output;
  bool tokens = false, no_normalize = false;
  encode::EncodeOptions options;
};

constexpr size_t kChunk = 256;  // texts per encode call; bounds memory on big inputs

std::vector<std::string> read_texts(const std::string& path) {
  std::vector<std::string> texts;
  for_each_line(path, [&](std::string_view line, size_t line_no) {
    if (line.find_first_not_of(" \t") == std::string_view::npos) return;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      throw FormatError(cat(path, ":", line_no, ": invalid JSON: ", e.what()));
    }
    VERITY_CHECK(j.is_object() && j.contains("text") && j["text"].is_string(), FormatError, path,
                 ":", line_no, ": expected an object with a string field \"text\"");
    texts.push_back(j["text"].get<std::string>());
  });
  return texts;
}

void run_encode(EncodeArgs& a) {
  apply_common_flags(a.common);
  install_interrupt_handler();
  a.options.normalize = !a.no_normalize;
  a.options.with_tokens = a.tokens;
  auto texts = read_texts(a.input);
  auto encoder = encode::make_encoder(a.model);
  log("encoding ", texts.size(), " texts with ", encoder->spec());
  AtomicFileWriter out(a.output);
  Progress progress("encoding", texts.size());
  size_t token_count = 0;
  for (size_t start = 0; start < texts.size(); start += kChunk) {
    check_interrupt();
    size_t n = std::min(kChunk, texts.size() - start);
    auto enc = encoder->encode(std::span(texts).subspan(start, n), a.options);
    for (size_t b = 0; b < n; ++b) {
      auto pooled = enc.pooled_row(b);
      nlohmann::json line = {{"text", texts[start + b]},
                             {"pooled", std::vector<float>(pooled.begin(), pooled.end())}};
      if (a.tokens) {
        nlohmann::json toks = nlohmann::json::array();
        size_t t_out = 0;
        for (size_t t = 0; t < enc.max_tokens; ++t) {
          if (!enc.mask[b * enc.max_tokens + t]) continue;
          auto v = enc.token_row(b, t);
          toks.push_back({{"token", enc.token_strings[b].at(t_out++)},
                          {"vector", std::vector<float>(v.begin(), v.end())}});
        }
        token_count += t_out;
        line["tokens"] = std::move(toks);
      }
      out.write(line.dump() + "\n");
    }
    progress.add(n);
  }
  out.commit();
  progress.finish();
  if (a.common.json)
    print_json({{"encoder", spec_for_report(encoder->spec())},
                {"dim", encoder->dim()},
                {"texts", texts.size()},
                {"tokens", token_count},
                {"output", a.output}});
}

void setup_encode(CLI::App& app) {
  auto args = std::make_shared<EncodeArgs>();
  auto* cmd = app.add_subcommand("encode", "Encode JSONL texts ({\"text\": ...} per line)");
  cmd->add_option("--model", args->model, "Encoder: use-lite | glove | kind:DIR | DIR")
      ->capture_default_str();
  cmd->add_option("--input", args->input, "Input JSONL file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--output", args->output, "Output JSONL file (written atomically)")->required();
  cmd->add_flag("--tokens", args->tokens, "Also write per-token strings and vectors");
  cmd->add_flag("--no-normalize", args->no_normalize, "Do not L2-normalize pooled vectors");
  cmd->add_option("--batch-size", args->options.batch_size, "Texts per forward pass")
      ->capture_default_str();
  cmd->add_option("--max-length", args->options.max_length, "Max tokens per text (0 = model default)")
      ->capture_default_str();
  cmd->add_option("--threads", args->options.threads, "Compute threads (0 = runtime default)")
      ->capture_default_str();
  add_common_flags(cmd, args->common);
  cmd->callback([args] { run_encode(*args); });
}

VERITY_REGISTER_COMMAND("encode", setup_encode);
}  // namespace
}  // namespace verity::cli
