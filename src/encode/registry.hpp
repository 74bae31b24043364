#pragma once
// Encoder factory. A spec is one of
//   "use-lite" | "glove"        a named pretrained model under the model root
//   "use-lite:DIR" | "glove:DIR" | "bert:DIR"   an explicit kind and directory
//   "DIR"                       a directory; the kind is read from verity.json
//                               (architecture) or, for Hugging Face BERT
//                               checkpoints, from config.json.
// The model root is $VERITY_MODEL_DIR, else the build's <source>/models, where
// scripts/setup_models.sh converts the npm-installed weights.
#include <memory>
#include <string>
#include <vector>

#include "encode/encoder.hpp"

namespace verity::encode {

struct EncoderKind {
  std::string name, help;
};
std::vector<EncoderKind> encoder_kinds();

std::string model_root();
std::unique_ptr<Encoder> make_encoder(const std::string& spec);

// What a trained verifier records of the encoder its maps came from:
// "<kind>:<crc32c of the model directory's files>", e.g. "use-lite:1a2b3c4d".
// Independent of where the directory lives; a fine-tuned copy differs.
// Encoders whose spec names no directory give their spec.
std::string encoder_identity(const Encoder& encoder);

// The spec to record where the encoder must be found again on another
// machine: the bare name ("use-lite") when the directory is that model under
// the model root, else the spec itself.
std::string portable_spec(const Encoder& encoder);

// Converts npm-installed pretrained weights into a verity model directory.
// kind: "use-lite" or "glove".
void convert_pretrained(const std::string& kind, const std::string& from, const std::string& out);

}  // namespace verity::encode
