// The command line: the commands, their options and help texts, parsed by
// CLI11; and the conversions of option values (integers, numbers) with
// errors that name the option.
#include <CLI/CLI.hpp>
#include <charconv>
#include <sstream>

#include "cli.h"
#include "singa/core/version.h"

namespace singa::cli {
namespace {

// Help text is wrapped to this many columns, descriptions start at kColumn.
constexpr size_t kWidth = 88, kColumn = 26;

enum class Arity { kFlag, kOne, kMany };

struct OptionDef {
  const char* name;     // "--batch"
  const char* metavar;  // "N ..."; empty for a flag
  Arity arity;
  const char* help;  // whole sentences
};

struct CommandDef {
  const char* name;
  const char* usage;    // after "usage: singa NAME "
  const char* summary;  // whole sentences, also listed by singa --help
  std::vector<OptionDef> options;
  const char* details;  // printed after the options by --help
  int (*run)(const Args&);
};

const OptionDef kThreads{"--threads", "N", Arity::kOne,
                         "Runs the model's ops on N threads (the default is one per core)."};
const OptionDef kDim{"--dim", "NAME=N ...", Arity::kMany,
                     "Sets the symbolic input dim NAME to N; give one NAME=N per dim (a dim not "
                     "given is 1)."};
const OptionDef kInput{
    "--input", "[NAME=]FILE ...", Arity::kMany,
    "Reads input values from .npy files, in the model's input order or as NAME=FILE.npy, or from "
    "an .npz file of arrays named like the inputs. It takes one or more files: the list ends at "
    "the next option, at --, or at the model (an argument ending in .onnx)."};
const OptionDef kSeed{"--seed", "N", Arity::kOne, "Seeds the generated inputs (the default is 0)."};

const std::vector<CommandDef>& Commands() {
  static const std::vector<CommandDef> commands = {
      {"info",
       "MODEL.onnx [options]",
       "Shows the model's IR and opset versions, its inputs and outputs, its parameter count, a "
       "FLOPs estimate, its op histogram and the nodes singa cannot import (with why).",
       {kDim,
        kInput,
        {"--device", "cpu|cuda", Arity::kOne,
         "With cuda, also lists the ops that have no GPU kernel for the model's nodes."}},
       "FLOPs are 2 per multiply-add of the Conv, ConvTranspose, Gemm and MatMul nodes, measured "
       "by one run with generated inputs (symbolic dims are 1 unless --dim sets them) or with the "
       "--input files. Other ops and the nodes of subgraphs are not counted. --device cuda also "
       "lists the ops whose nodes would run on the CPU, their inputs and outputs copied, were the "
       "model on a GPU (no GPU needed; nodes of the top graph, from the same run).",
       RunInfo},
      {"run",
       "MODEL.onnx [--input FILE ...] [--output out.npz] [options]",
       "Runs the model once and writes its outputs, by name, to an .npz file (or its one output "
       "to an .npy file).",
       {kInput,
        {"--output", "FILE", Arity::kOne,
         "Writes the outputs to FILE: an .npz file holds every output by name, an .npy file the "
         "model's only output."},
        {"--generate", "", Arity::kFlag,
         "Generates the inputs that --input does not give (see singa bench --help)."},
        kDim,
        kThreads,
        kSeed},
       "Input files must match the model's declared dtypes and shapes. numpy writes float64 by "
       "default, so save float32 arrays for a float32 model. The options may come before or after "
       "the model: singa run --input x.npy model.onnx and singa run model.onnx --input x.npy are "
       "the same.",
       RunRun},
      {"bench",
       "MODEL.onnx [--batch N ...] [--threads N] [--iterations K] [options]",
       "Times the model on generated inputs and reports latency percentiles, throughput and peak "
       "memory for each batch size.",
       {{"--batch", "N ...", Arity::kMany,
         "Times these batch sizes, each the symbolic first dim of the inputs (the default is 1)."},
        kThreads,
        {"--iterations", "K", Arity::kOne, "Times K runs per batch size (the default is 20)."},
        {"--warmup", "K", Arity::kOne,
         "Runs the model K times untimed before the timed runs (the default is 2)."},
        {"--profile", "FILE", Arity::kOne,
         "Profiles one more run of each batch size, node by node, writes the profiles to FILE in "
         "the Chrome trace format (a .json file that chrome://tracing and Perfetto open) and "
         "prints the op types that took the most time."},
        kDim,
        kSeed},
       "Generated inputs hold floats uniform in [0, 1), integers 0 and bools false. 'pool peak' "
       "is the most memory singa's allocator held during the timed runs (weights included); peak "
       "RSS is the whole process's.",
       RunBench},
      {"check",
       "MODEL.onnx [--input FILE ...] [--atol A] [--rtol R] [options]",
       "Runs the model with singa and with onnxruntime on the same inputs and reports the largest "
       "differences per output. It exits with 1 when an element is outside the tolerance.",
       {kInput,
        {"--atol", "A", Arity::kOne, "Sets the absolute tolerance (the default is 1e-4)."},
        {"--rtol", "R", Arity::kOne, "Sets the relative tolerance (the default is 1e-3)."},
        kDim,
        kThreads,
        kSeed},
       "Inputs not given are generated (see singa bench --help). The check runs the Python "
       "module singa.check (python -m singa.check takes the same arguments), which runs singa and "
       "onnxruntime in one process, with $SINGA_PYTHON, else the python beside this executable, "
       "else python3. Without onnxruntime the model runs in singa only and the check says so "
       "(exit 0).",
       RunCheck},
  };
  return commands;
}

constexpr const char* kMainDescription = "Looks at, runs, times and checks ONNX models with singa.";
constexpr const char* kMainFooter = "'singa COMMAND --help' describes a command's options.";

// `text` broken into lines of at most `width` columns at spaces.
std::string Wrap(const std::string& text, size_t width) {
  std::istringstream words(text);
  std::string out, line, word;
  while (words >> word) {
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line;
}

// `left` in the first column, `text` wrapped beside it.
std::string Row(std::string left, const std::string& text) {
  left = "  " + left;
  left += left.size() + 2 > kColumn ? "\n" + std::string(kColumn, ' ')
                                    : std::string(kColumn - left.size(), ' ');
  std::string wrapped = Wrap(text, kWidth - kColumn);
  for (size_t at = 0; (at = wrapped.find('\n', at)) != std::string::npos; at += kColumn + 1)
    wrapped.insert(at + 1, kColumn, ' ');
  return left + wrapped + "\n";
}

// CLI11's help, laid out as singa's: usage first, then the description,
// arguments, commands and options, each text wrapped in whole words.
class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter() { label("Positionals", "arguments"); }

  std::string make_help(const CLI::App* app, std::string, CLI::AppFormatMode mode) const override {
    std::string usage = "singa COMMAND MODEL.onnx [options]";
    for (const CommandDef& c : Commands())
      if (app->get_name() == c.name) usage = std::string("singa ") + c.name + " " + c.usage;
    std::string out = "usage: " + usage + "\n\n" + Wrap(app->get_description(), kWidth) + "\n";
    out += make_positionals(app) + make_subcommands(app, mode) + make_groups(app, mode);
    if (!app->get_footer().empty()) out += "\n" + Wrap(app->get_footer(), kWidth) + "\n";
    return out;
  }

  std::string make_option(const CLI::Option* opt, bool positional) const override {
    if (positional) return Row(opt->get_option_text(), opt->get_description());
    std::string names = opt->get_name(false, true);  // "-h,--help"
    for (size_t at = 0; (at = names.find(',', at)) != std::string::npos; at += 2)
      names.insert(at + 1, " ");
    const std::string metavar = opt->get_option_text();
    return Row(names + (metavar.empty() ? "" : " " + metavar), opt->get_description());
  }

  std::string make_subcommand(const CLI::App* sub) const override {
    return Row(sub->get_name(), sub->get_description());
  }
};

std::string CommandNames() {
  std::string names;
  for (const CommandDef& c : Commands()) names += (names.empty() ? "" : ", ") + std::string(c.name);
  return names;
}

// An argument CLI11 did not take: an unknown option or a second positional.
[[noreturn]] void Unexpected(const std::string& arg, bool in_command) {
  if (arg.size() > 1 && arg[0] == '-') throw UsageError("unknown option '" + arg + "'");
  if (!in_command)
    throw UsageError("unknown command '" + arg + "'; the commands are " + CommandNames());
  throw UsageError("unexpected argument '" + arg + "' (one MODEL only)");
}

}  // namespace

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

CommandLine ParseCommandLine(int argc, const char* const* argv, std::string& command) {
  CLI::App app(kMainDescription, "singa");
  app.formatter(std::make_shared<HelpFormatter>());
  app.option_defaults()->group("options");
  app.set_help_flag("-h,--help", "Prints this help and exits.");
  app.set_version_flag("--version", std::string("singa ") + Version(),
                       "Prints singa's version and exits.");
  app.footer(kMainFooter);
  app.allow_extras();

  // Values by option name, as CLI11 collects them (the map's nodes stay put).
  struct Parsed {
    std::string model;
    std::map<std::string, std::vector<std::string>> values;
    std::map<std::string, CLI::Option*> options;
  };
  std::vector<Parsed> parsed(Commands().size());
  for (size_t i = 0; i < Commands().size(); ++i) {
    const CommandDef& def = Commands()[i];
    CLI::App* sub = app.add_subcommand(def.name, def.summary);
    sub->group("commands");
    sub->footer(def.details);
    sub->allow_extras();
    sub->set_help_flag();  // added again after the options, to be listed last
    sub->add_option("MODEL", parsed[i].model, "The ONNX model file.")->option_text("MODEL.onnx");
    for (const OptionDef& o : def.options) {
      CLI::Option* opt;
      if (o.arity == Arity::kFlag) {
        opt = sub->add_flag(o.name, o.help);
      } else {
        opt = sub->add_option(o.name, parsed[i].values[o.name], o.help)
                  ->option_text(o.metavar)
                  ->type_name(o.metavar);
        if (o.arity == Arity::kOne)  // a second value is refused below, by name
          opt->expected(1)->allow_extra_args(false)->multi_option_policy(
              CLI::MultiOptionPolicy::TakeAll);
        else
          opt->expected(1, -1)->allow_extra_args();
      }
      parsed[i].options[o.name] = opt;
    }
    sub->set_help_flag("-h,--help", "Prints this help and exits.");
  }

  CommandLine out;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    const std::vector<CLI::App*> subs = app.get_subcommands();
    out.text = subs.empty() ? app.help() : subs[0]->help();
    return out;
  } catch (const CLI::CallForVersion& e) {
    out.text = std::string(e.what()) + "\n";
    return out;
  } catch (const CLI::ParseError& e) {
    const std::vector<CLI::App*> subs = app.get_subcommands();
    if (!subs.empty()) command = subs[0]->get_name();
    // CLI11 says "--output: 1 required FILE missing".
    const std::string what = e.what();
    if (what.starts_with("--") && what.ends_with(" missing"))
      throw UsageError(what.substr(0, what.find(':')) + " needs a value");
    throw UsageError(what);
  }

  const std::vector<CLI::App*> subs = app.get_subcommands();
  if (!app.remaining().empty()) Unexpected(app.remaining()[0], false);
  if (subs.empty()) throw UsageError("no command given; the commands are " + CommandNames());
  CLI::App* sub = subs[0];
  command = sub->get_name();
  size_t index = 0;
  while (Commands()[index].name != command) ++index;
  Parsed& p = parsed[index];
  if (!sub->remaining().empty()) Unexpected(sub->remaining()[0], true);

  Args& args = out.args;
  args.command = command;
  args.run = Commands()[index].run;
  args.model = p.model;
  for (auto& [name, option] : p.options) {
    if (option->count() == 0) continue;
    if (option->get_expected_max() == 0) {
      args.values[name] = {"1"};
      continue;
    }
    std::vector<std::string>& vals = p.values[name];
    if (option->get_expected_max() == 1 && vals.size() > 1)
      throw UsageError(name + " is given twice");
    args.values[name] = vals;
  }
  // --input takes one or more files: a file ending in .onnx among them is the model.
  if (auto it = args.values.find("--input"); it != args.values.end()) {
    std::vector<std::string>& inputs = it->second;
    for (auto f = inputs.begin(); f != inputs.end();) {
      if (!f->ends_with(".onnx")) {
        ++f;
        continue;
      }
      if (!args.model.empty()) Unexpected(*f, true);
      args.model = *f;
      f = inputs.erase(f);
    }
    if (inputs.empty()) throw UsageError("--input needs a value ([NAME=]FILE)");
  }
  if (args.model.empty() && args.has("--input"))
    throw UsageError("no MODEL.onnx given: --input takes the files up to the next option, so '" +
                     args.list("--input").back() +
                     "' is read as an input; give the model first or end the input files with --");
  if (args.model.empty()) throw UsageError("no MODEL.onnx given");
  return out;
}

}  // namespace singa::cli
