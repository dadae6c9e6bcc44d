//===- FuzzInput.h - A fuzz input as a file for the path readers -*- C++
//-*-===//
//
// The report, run-result and config readers take a path, as the tool does.
// Each fuzzer writes its input to one file of its own in /dev/shm (memory,
// not the disk; /tmp where there is none) and removes it when it exits.
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_FUZZ_FUZZINPUT_H
#define SKYLINE_FUZZ_FUZZINPUT_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace skyline::fuzz {

class InputFile {
public:
  explicit InputFile(const char *Name) {
    const char *Dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    Path = std::string(Dir) + "/skyline-fuzz-" + std::to_string(getpid()) +
           "-" + Name;
  }
  ~InputFile() { std::remove(Path.c_str()); }

  /// Replaces the file's contents with the input; exits if it cannot, as a
  /// fuzzer that reads nothing would only waste its time.
  const std::string &write(const uint8_t *Data, size_t Size) {
    std::FILE *Out = std::fopen(Path.c_str(), "wb");
    if (!Out || std::fwrite(Data, 1, Size, Out) != Size ||
        std::fclose(Out) != 0) {
      std::perror(Path.c_str());
      std::exit(2);
    }
    return Path;
  }

private:
  std::string Path;
};

} // namespace skyline::fuzz

#endif // SKYLINE_FUZZ_FUZZINPUT_H
