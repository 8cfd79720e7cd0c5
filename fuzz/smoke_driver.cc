// A short fuzz run without libFuzzer, so that every build's test suite runs each target (gcc has
// no -fsanitize=fuzzer): each file of the corpus directories is fed to LLVMFuzzerTestOneInput as
// it is, then --runs mutations of them (a byte flipped, inserted, deleted or repeated, the input
// truncated, a piece of another input spliced in; std::mt19937_64 seeded with --seed, so a run is
// the same every time). No coverage guides it: the libFuzzer build (README.md) searches deeper.
// A crash or abort ends the process as the target left it; the input being run is written first
// to `crash-<target>_smoke` in the working directory, to replay with the libFuzzer build.
//
//   <target>_smoke [--runs N] [--seed S] DIR...
#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

// The input being run and where to save it when a signal ends the run (async-signal-safe: the
// handler writes the bytes it finds here with write(2)).
const std::string* current = nullptr;
int crash_file = -1;

void SaveInputAndDie(int signal) {
  if (current != nullptr && crash_file >= 0) {
    (void)!write(crash_file, current->data(), current->size());
    close(crash_file);
  }
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

void Run(const std::string& input) {
  current = &input;
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

std::string Mutate(const std::vector<std::string>& corpus, std::mt19937_64& random) {
  std::string input = corpus[random() % corpus.size()];
  const int edits = 1 + static_cast<int>(random() % 4);
  for (int e = 0; e < edits; ++e) {
    const size_t at = input.empty() ? 0 : random() % input.size();
    switch (random() % 6) {
      case 0:
        if (!input.empty()) input[at] = static_cast<char>(input[at] ^ (1 << (random() % 8)));
        break;
      case 1:
        input.insert(at, 1, "{}[]\",:0-9.e \n\\"[random() % 17]);
        break;
      case 2:
        if (!input.empty()) input.erase(at, 1 + random() % 8);
        break;
      case 3:
        if (!input.empty()) input.insert(at, input.substr(at, 1 + random() % 16));
        break;
      case 4:
        input.resize(at);
        break;
      default: {
        const std::string& other = corpus[random() % corpus.size()];
        if (other.empty()) break;
        const size_t from = random() % other.size();
        input.insert(at, other.substr(from, 1 + random() % 64));
      }
    }
  }
  return input;
}

}  // namespace

int main(int argc, char** argv) {
  long runs = 2000;
  unsigned long seed = 1;
  std::vector<std::string> corpus;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--runs" && i + 1 < argc) {
      runs = std::strtol(argv[++i], nullptr, 10);
    } else if (arg == "--seed" && i + 1 < argc) {
      seed = std::strtoul(argv[++i], nullptr, 10);
    } else {
      std::error_code error;
      for (const auto& entry : std::filesystem::directory_iterator(arg, error)) {
        if (!entry.is_regular_file()) continue;
        std::ifstream file(entry.path(), std::ios::binary);
        std::stringstream bytes;
        bytes << file.rdbuf();
        corpus.push_back(bytes.str());
      }
      if (error) {
        std::fprintf(stderr, "%s: %s\n", arg.c_str(), error.message().c_str());
        return 2;
      }
    }
  }
  if (corpus.empty()) {
    std::fprintf(stderr, "usage: %s [--runs N] [--seed S] DIR...  (no corpus file found)\n",
                 argv[0]);
    return 2;
  }
  const std::string name = std::filesystem::path(argv[0]).filename().string();
  crash_file = open(("crash-" + name).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  for (int signal : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL})
    std::signal(signal, SaveInputAndDie);
  for (const std::string& input : corpus) Run(input);
  std::mt19937_64 random(seed);
  for (long r = 0; r < runs; ++r) Run(Mutate(corpus, random));
  current = nullptr;
  close(crash_file);
  std::filesystem::remove("crash-" + name);
  std::printf("%s: %zu corpus inputs and %ld mutations, no crash\n", name.c_str(), corpus.size(),
              runs);
  return 0;
}
