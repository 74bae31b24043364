#pragma once
// An index directory bundles the parts built from one corpus:
//   manifest.json  format/version, corpus provenance, the parts present
//   docs.vds       DocStore (ids, titles, texts)
//   bm25.vbm       Bm25Index           (optional)
//   further parts (dense vectors, token vectors) are added by later stages.
// It is built in "<dir>.tmp.<pid>" and renamed into place, so readers never
// see a half-built index; an existing index at the target is replaced.
#include <cstdint>
#include <map>
#include <string>

namespace verity::index {

struct IndexManifest {
  int version = 1;
  std::string corpus_path;
  uint64_t corpus_hash = 0;
  uint64_t docs = 0;
  std::string doc_fields;                    // "title+text" or "text"
  std::map<std::string, std::string> parts;  // part name -> file name inside the directory
  std::map<std::string, std::string> specs;  // part name -> factory spec / settings
  std::string created_by;                    // command line that built it
};

IndexManifest read_index_manifest(const std::string& dir);

class IndexDirBuilder {
 public:
  explicit IndexDirBuilder(std::string final_dir);
  ~IndexDirBuilder();  // removes the temp directory unless committed
  // Path inside the temp directory where a part's file should be written.
  std::string part_path(const std::string& file_name) const;
  void commit(const IndexManifest& manifest);

 private:
  std::string final_dir_, tmp_dir_;
  bool committed_ = false;
};

// Path of a part inside an index directory; throws naming the part when absent.
std::string index_part_path(const std::string& dir, const IndexManifest& m, const std::string& part);

}  // namespace verity::index
