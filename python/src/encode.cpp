// verity.Encoder, verity.Encoded and verity.similarity_map: encoder output and
// similarity maps as numpy views of the C++ buffers (no copies).
#include <pybind11/stl.h>

#include <sstream>

#include "common.hpp"
#include "encode/registry.hpp"
#include "verify/similarity_map.hpp"

namespace verity::python {
namespace {

struct PyEncoded {
  std::shared_ptr<const encode::Encoded> enc;
  bool with_tokens = true;

  py::array_t<float> pooled() const {
    return view(enc->pooled.data(), {py::ssize_t(enc->batch), py::ssize_t(enc->dim)}, enc);
  }
  // Right padding (encode/encoder.hpp): text b's rows are one contiguous block.
  py::list tokens() const {
    py::list out;
    if (!with_tokens) return out;
    for (size_t b = 0; b < enc->batch; ++b)
      out.append(view(enc->tokens.data() + b * enc->max_tokens * enc->dim,
                      {py::ssize_t(enc->length(b)), py::ssize_t(enc->dim)}, enc));
    return out;
  }
  std::vector<size_t> lengths() const {
    std::vector<size_t> out(enc->batch);
    for (size_t b = 0; b < enc->batch; ++b) out[b] = enc->length(b);
    return out;
  }
};

// A 2-D float32 row-major array; anything else is a ConfigError naming `what`.
using FloatRows = py::array_t<float, py::array::c_style | py::array::forcecast>;
void check_rows(const FloatRows& a, const char* what) {
  if (a.ndim() != 2) {
    std::ostringstream shape;
    for (py::ssize_t i = 0; i < a.ndim(); ++i) shape << (i ? ", " : "") << a.shape(i);
    throw ConfigError(cat("similarity_map: ", what, " must be a 2-D array (tokens × dim), got shape (",
                          shape.str(), a.ndim() == 1 ? ",)" : ")"));
  }
}

py::array_t<float> similarity_map(const FloatRows& query, const FloatRows& candidate) {
  check_rows(query, "query");
  check_rows(candidate, "candidate");
  VERITY_CHECK(query.shape(1) == candidate.shape(1), ConfigError, "similarity_map: query has dim ",
               query.shape(1), ", candidate has dim ", candidate.shape(1));
  const size_t dim = size_t(query.shape(1));
  auto map = std::make_shared<verify::SimilarityMap>(verify::SimilarityMap::compute(
      {query.data(), size_t(query.size())}, {candidate.data(), size_t(candidate.size())}, dim));
  return view(map->values().data(), {py::ssize_t(query.shape(0)), py::ssize_t(candidate.shape(0))}, map);
}

}  // namespace

void bind_encode(py::module_& m) {
  py::class_<PyEncoded>(m, "Encoded", R"(Output of Encoder.encode for n texts.

Every array is a float32 view of the encoder's own buffer (no copy); it stays
valid as long as any array or this object is alive.)")
      .def_property_readonly("pooled", &PyEncoded::pooled,
                             "np.ndarray float32 (n, dim): one pooled vector per text "
                             "(L2-normalized unless normalize=False).")
      .def_property_readonly("tokens", &PyEncoded::tokens,
                             "list of n np.ndarray float32 (len_i, dim): the token vectors of each "
                             "text, padding excluded; [] when encoded with tokens=False.")
      .def_property_readonly(
          "token_strings", [](const PyEncoded& e) { return e.enc->token_strings; },
          "list of n lists of str: the token pieces, one per row of tokens[i]; [] when "
          "encoded with tokens=False.")
      .def_property_readonly("lengths", &PyEncoded::lengths, "list of int: tokens per text.")
      .def_property_readonly(
          "dim", [](const PyEncoded& e) { return e.enc->dim; }, "Vector dimension.")
      .def("__len__", [](const PyEncoded& e) { return e.enc->batch; })
      .def("__repr__", [](const PyEncoded& e) {
        return cat("<verity.Encoded n=", e.enc->batch, " dim=", e.enc->dim, ">");
      });

  py::class_<encode::Encoder, std::shared_ptr<encode::Encoder>>(m, "Encoder", R"(A text encoder.

Encoder(spec) opens "use-lite" or "glove" (pretrained models under the model
root: $VERITY_MODEL_DIR, else the source tree's models/), "kind:DIR"
(use-lite, glove, bert) or a model directory. Thread-safe; encode releases
the GIL and stops on Ctrl-C (KeyboardInterrupt).)")
      .def(py::init([](const std::string& spec) {
             return std::shared_ptr<encode::Encoder>(without_gil([&] { return encode::make_encoder(spec); }));
           }),
           py::arg("spec") = "use-lite", "Opens the encoder named by spec; ConfigError/FormatError when it cannot.")
      .def(
          "encode",
          [](const encode::Encoder& self, std::vector<std::string> texts, bool tokens, bool normalize,
             size_t batch_size, size_t max_length, int threads) {
            encode::EncodeOptions o;
            o.with_tokens = tokens;
            o.normalize = normalize;
            o.batch_size = batch_size;
            o.max_length = max_length;
            o.threads = threads;
            auto enc = without_gil([&] { return std::make_shared<const encode::Encoded>(self.encode(texts, o)); });
            return PyEncoded{std::move(enc), tokens};
          },
          py::arg("texts"), py::kw_only(), py::arg("tokens") = true, py::arg("normalize") = true,
          py::arg("batch_size") = encode::EncodeOptions{}.batch_size, py::arg("max_length") = 0,
          py::arg("threads") = 0,
          R"(Encodes a list of texts; returns an Encoded (pooled, tokens, token_strings).

tokens=False skips token vectors; max_length=0 keeps the model's limit;
threads=0 leaves the runtime's thread count.)")
      .def_property_readonly("spec", &encode::Encoder::spec, "Factory string that reopens this encoder.")
      .def_property_readonly("dim", &encode::Encoder::dim, "Vector dimension.")
      .def("__repr__", [](const encode::Encoder& e) {
        return cat("<verity.Encoder ", e.spec(), " dim=", e.dim(), ">");
      });

  m.def("similarity_map", &similarity_map, py::arg("query"), py::arg("candidate"),
        R"(The token similarity map M[i][j] = cos(query_i, candidate_j).

query (len_q, dim) and candidate (len_d, dim) are 2-D arrays (converted to
float32); returns np.ndarray float32 (len_q, len_d). A zero row gives a zero
row/column. Non-finite values or mismatched dims raise ConfigError.)");
}

}  // namespace verity::python
