#include "core/atomic_dir.hpp"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>  // renameat2
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/error.hpp"

namespace verity {
namespace fs = std::filesystem;

void replace_directory(const std::string& staging, const std::string& target) {
  std::error_code ec;
  if (fs::exists(target, ec)) {
    if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
      fs::remove_all(staging, ec);  // now the old directory
      return;
    }
    VERITY_CHECK(errno == EINVAL || errno == ENOSYS || errno == ENOTSUP, Error, "cannot swap ", staging,
                 " into ", target, ": ", std::strerror(errno));
    const std::string old = target + ".old." + std::to_string(::getpid());
    fs::remove_all(old, ec);
    VERITY_CHECK(::rename(target.c_str(), old.c_str()) == 0, Error, "cannot move ", target, " aside: ",
                 std::strerror(errno));
    VERITY_CHECK(::rename(staging.c_str(), target.c_str()) == 0, Error, "cannot rename ", staging, " to ",
                 target, ": ", std::strerror(errno));
    fs::remove_all(old, ec);
    return;
  }
  VERITY_CHECK(::rename(staging.c_str(), target.c_str()) == 0, Error, "cannot rename ", staging, " to ", target,
               ": ", std::strerror(errno));
}

size_t remove_stale_siblings(const std::string& path) {
  std::error_code ec;
  const fs::path p(path);
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  const std::string base = p.filename().string();
  if (base.empty()) return 0;
  std::vector<fs::path> stale;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= base.size() + 5 || name.compare(0, base.size(), base) != 0) continue;
    std::string rest = name.substr(base.size());
    if (rest.rfind(".tmp.", 0) != 0 && rest.rfind(".old.", 0) != 0) continue;
    rest = rest.substr(5);
    // The pid, then nothing or a further suffix (a staging directory's own temporaries).
    const size_t digits = std::min(rest.find_first_not_of("0123456789"), rest.size());
    if (digits == 0 || digits > 9 || (digits < rest.size() && rest[digits] != '.')) continue;
    const pid_t pid = pid_t(std::stol(rest.substr(0, digits)));
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    stale.push_back(it->path());
  }
  size_t removed = 0;
  for (const auto& s : stale) {
    ec.clear();
    fs::remove_all(s, ec);
    removed += !ec;
  }
  return removed;
}

}  // namespace verity
