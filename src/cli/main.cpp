#include <CLI/CLI.hpp>
#include <cstdio>
#include "core/log.hpp"
int main(int argc, char** argv) {
  CLI::App app{"verity"};
  CLI11_PARSE(app, argc, argv);
  return 0;
}
