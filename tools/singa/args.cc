// Command-line parsing: one positional MODEL, options declared per command.
#include <cctype>
#include <charconv>
#include <sstream>

#include "cli.h"

namespace singa::cli {

const std::vector<std::string>& Args::list(const std::string& name) const {
  static const std::vector<std::string> kNone;
  auto it = values.find(name);
  return it == values.end() ? kNone : it->second;
}

std::string Args::get(const std::string& name, const std::string& fallback) const {
  auto it = values.find(name);
  return it == values.end() ? fallback : it->second.back();
}

int64_t ParseInt(const std::string& text, const std::string& what) {
  int64_t v = 0;
  auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (err != std::errc() || end != text.data() + text.size())
    throw UsageError(what + " takes an integer, got '" + text + "'");
  return v;
}

int64_t Args::get_int(const std::string& name, int64_t fallback, int64_t min_value) const {
  if (!has(name)) return fallback;
  const int64_t v = ParseInt(get(name, ""), name);
  if (v < min_value)
    throw UsageError(name + " must be at least " + std::to_string(min_value) + ", got " +
                     std::to_string(v));
  return v;
}

std::vector<int64_t> Args::get_ints(const std::string& name, std::vector<int64_t> fallback,
                                    int64_t min_value) const {
  if (!has(name)) return fallback;
  std::vector<int64_t> out;
  for (const std::string& s : list(name)) {
    const int64_t v = ParseInt(s, name);
    if (v < min_value)
      throw UsageError(name + " values must be at least " + std::to_string(min_value) + ", got " +
                       s);
    out.push_back(v);
  }
  return out;
}

double Args::get_double(const std::string& name, double fallback) const {
  if (!has(name)) return fallback;
  const std::string s = get(name, "");
  double v = 0;
  auto [end, err] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (err != std::errc() || end != s.data() + s.size() || v < 0)
    throw UsageError(name + " takes a non-negative number, got '" + s + "'");
  return v;
}

Args ParseArgs(const Command& command, int argc, char** argv, bool& help) {
  Args args;
  args.command = &command;
  help = false;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      help = true;
      return args;
    }
    if (!a.starts_with("-") || a == "-") {
      if (!args.model.empty()) throw UsageError("unexpected argument '" + a + "' (one MODEL only)");
      args.model = a;
      continue;
    }
    // --name=value is the same as --name value.
    std::string name = a, inline_value;
    const size_t eq = a.find('=');
    const bool has_inline = a.starts_with("--") && eq != std::string::npos;
    if (has_inline) name = a.substr(0, eq), inline_value = a.substr(eq + 1);
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& o : command.options)
      if (o.name == name) spec = &o;
    if (!spec) throw UsageError("unknown option '" + name + "'");
    std::vector<std::string>& vals = args.values[name];
    if (spec->metavar.empty()) {
      if (has_inline) throw UsageError(name + " takes no value");
      vals.push_back("1");
      continue;
    }
    if (has_inline) {
      vals.push_back(inline_value);
      continue;
    }
    const size_t before = vals.size();
    while (i + 1 < argc) {
      const std::string next = argv[i + 1];
      // A value may be negative ("-1") but not an option.
      const bool is_option = next.starts_with("-") && next.size() > 1 &&
                             !(std::isdigit(static_cast<unsigned char>(next[1])) || next[1] == '.');
      if (is_option) break;
      vals.push_back(next);
      ++i;
      if (!spec->many) break;
    }
    if (vals.size() == before) throw UsageError(name + " needs a value (" + spec->metavar + ")");
    if (!spec->many && vals.size() > 1) throw UsageError(name + " is given twice");
  }
  if (args.model.empty()) throw UsageError("no MODEL.onnx given");
  return args;
}

std::string HelpText(const Command& c) {
  std::ostringstream os;
  os << "usage: singa " << c.name << " " << c.usage << "\n\n" << c.summary << "\n";
  if (!c.options.empty()) {
    os << "\noptions:\n";
    for (const OptionSpec& o : c.options) {
      std::string left = "  " + o.name + (o.metavar.empty() ? "" : " " + o.metavar);
      if (left.size() < 26)
        left.resize(26, ' ');
      else
        left += "\n" + std::string(26, ' ');
      os << left << o.help << "\n";
    }
    os << "  -h, --help              this text\n";
  }
  if (!c.details.empty()) os << "\n" << c.details;
  return os.str();
}

}  // namespace singa::cli
