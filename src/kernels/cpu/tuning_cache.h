// Kernel choices that were timed (which layout a convolution runs fastest
// in), kept in a file across processes: a process times only what no
// earlier process on this machine timed, so a model's first run in a new
// process does not time its convolutions again.
//
//   TuningFile& f = TuningFile::Layouts();
//   if (auto pick = f.Lookup(key)) ...;  // else time the candidates, then
//   f.Remember(key, "c16");
//
// One file per CPU model, instruction set and oneDNN version, one
// "key<TAB>choice" line per choice, appended as choices are made. The
// directory is $SINGA_CACHE_DIR, else $XDG_CACHE_HOME/singa, else
// $HOME/.cache/singa; SINGA_CACHE_DIR set but empty keeps choices in the
// process only. A file that cannot be read or written, lines that are not
// "key<TAB>choice", and a file past kMaxBytes are ignored: the caller times
// again. The caller checks that a choice it reads is one it knows.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace singa::cpu {

class TuningFile {
 public:
  static constexpr size_t kMaxBytes = size_t{4} << 20;

  // Choices kept in `path` ("" keeps them in memory only); the file is
  // read on first use.
  explicit TuningFile(std::string path) : path_(std::move(path)) {}
  // The process's layout choices, in the directory described above.
  static TuningFile& Layouts();

  std::optional<std::string> Lookup(const std::string& key);
  // Keeps a choice (the first one for a key stays) and appends it to the
  // file. Keys and choices with tabs or line breaks are not kept.
  void Remember(const std::string& key, const std::string& choice);
  const std::string& path() const { return path_; }

 private:
  void Load();  // under mu_

  const std::string path_;
  std::mutex mu_;
  bool loaded_ = false;
  std::unordered_map<std::string, std::string> choices_;
};

}  // namespace singa::cpu
