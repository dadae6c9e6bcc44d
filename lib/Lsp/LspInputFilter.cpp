//===- LspInputFilter.cpp - skyline-lsp's input, framed and bounded -------===//
//
// Headers read a line at a time from fixed chunks, and one linear,
// non-recursive pass over each body before anything parses it; the
// transport then reads what passed (LspInputFilter.h).
//
//===----------------------------------------------------------------------===//

#include "skyline/LspInputFilter.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace skyline {
namespace {

namespace json = llvm::json;

/// What the filter reads at a time, also past a refused body.
constexpr size_t ChunkBytes = 64 << 10;
/// A header line longer than this keeps only its last KeptLineBytes: the
/// "Content-Length: N" a long line of leftovers may end in.
constexpr size_t MaxLineBytes = 4096;
constexpr size_t KeptLineBytes = 256;
/// An id longer than this is not looked for in a refused message.
constexpr size_t MaxIdBytes = 256;

/// Client text in a message: printable ASCII (a JSON string must be UTF-8),
/// at most Max characters.
std::string printable(llvm::StringRef Text, size_t Max = 40) {
  std::string Shown;
  for (char C : Text.take_front(Max))
    Shown += C >= 0x20 && C < 0x7f ? C : '?';
  if (Text.size() > Max)
    Shown += "...";
  return Shown;
}

/// What one pass over a body finds without parsing it: how deep it nests,
/// about how many values it holds, and the top-level object's "id" and
/// whether it has a "method" (for a refused request's reply).
struct Shape {
  uint64_t Depth = 0;
  uint64_t Values = 0;
  std::optional<json::Value> Id;
  bool HasMethod = false;
};

Shape scan(llvm::StringRef Body) {
  Shape Result;
  bool TopObject = Body.ltrim().starts_with("{");
  uint64_t Depth = 0, Separators = 0, Containers = 0;
  bool InString = false, Escaped = false;
  // Within the top-level object (depth 1): the key being read, the last
  // key, and where its value began.
  bool ExpectKey = false, InKey = false;
  size_t KeyBegin = 0, ValueBegin = llvm::StringRef::npos;
  llvm::StringRef Key;
  auto EndValue = [&](size_t End) {
    if (ValueBegin != llvm::StringRef::npos) {
      if (Key == "method")
        Result.HasMethod = true;
      llvm::StringRef Raw = Body.slice(ValueBegin, End).trim();
      // At most MaxIdBytes nest at most that deep: parsed safely.
      if (Key == "id" && Raw.size() <= MaxIdBytes) {
        if (auto Id = json::parse(Raw)) {
          if (Id->kind() == json::Value::Number ||
              Id->kind() == json::Value::String)
            Result.Id = std::move(*Id);
        } else {
          llvm::consumeError(Id.takeError());
        }
      }
    }
    ValueBegin = llvm::StringRef::npos;
    Key = {};
  };
  for (size_t I = 0, E = Body.size(); I < E; ++I) {
    char C = Body[I];
    if (InString) {
      if (Escaped) {
        Escaped = false;
      } else if (C == '\\') {
        Escaped = true;
      } else if (C == '"') {
        InString = false;
        if (InKey) {
          Key = Body.slice(KeyBegin, I);
          InKey = false;
        }
      }
      continue;
    }
    switch (C) {
    case '"':
      InString = true;
      if (TopObject && Depth == 1 && ExpectKey) {
        InKey = true;
        KeyBegin = I + 1;
        ExpectKey = false;
      }
      break;
    case '{':
    case '[':
      ++Containers;
      Result.Depth = std::max(Result.Depth, ++Depth);
      if (TopObject && Depth == 1)
        ExpectKey = true;
      break;
    case '}':
    case ']':
      if (TopObject && Depth == 1)
        EndValue(I);
      if (Depth)
        --Depth;
      break;
    case ':':
      if (TopObject && Depth == 1)
        ValueBegin = I + 1;
      break;
    case ',':
      ++Separators;
      if (TopObject && Depth == 1) {
        EndValue(I);
        ExpectKey = true;
      }
      break;
    default:
      break;
    }
  }
  Result.Values = Separators + Containers + 1;
  return Result;
}

} // namespace

std::optional<LspRejection> checkLspMessage(llvm::StringRef Body,
                                            const LspInputLimits &Limits) {
  Shape Found = scan(Body);
  auto Refuse = [&](int Code, std::string Message) {
    LspRejection Rejection;
    Rejection.Code = Code;
    Rejection.Message = std::move(Message);
    // Only a request is answered by its id: a response's id is one of the
    // server's own requests.
    if (Found.HasMethod)
      Rejection.Id = Found.Id;
    return Rejection;
  };
  if (Found.Depth > Limits.MaxNesting)
    return Refuse(LspInvalidRequest,
                  llvm::formatv("a message nested {0} deep was skipped: the "
                                "limit is {1}",
                                Found.Depth, Limits.MaxNesting));
  if (Found.Values > Limits.MaxValues)
    return Refuse(LspInvalidRequest,
                  llvm::formatv("a message of about {0} JSON values was "
                                "skipped: the limit is {1}",
                                Found.Values, Limits.MaxValues));
  // Within the nesting limit: the recursive parser is safe now.
  llvm::Expected<json::Value> Parsed = json::parse(Body);
  if (!Parsed)
    return Refuse(LspParseError, "a message that is not JSON was skipped (" +
                                     llvm::toString(Parsed.takeError()) + ")");
  const json::Object *Object = Parsed->getAsObject();
  if (!Object)
    return Refuse(LspInvalidRequest,
                  "a message that is not a JSON object was skipped");
  const json::Value *Method = Object->get("method");
  Found.HasMethod = Method && Method->getAsString();
  if (Object->getString("jsonrpc") != std::optional<llvm::StringRef>("2.0"))
    return Refuse(LspInvalidRequest, "a message without \"jsonrpc\": \"2.0\" "
                                     "was skipped");
  if (Method && !Method->getAsString())
    return Refuse(LspInvalidRequest,
                  "a message whose method is not a string was skipped");
  if (!Method && !Object->get("id"))
    return Refuse(LspInvalidRequest,
                  "a message with neither a method nor an id was skipped");
  return std::nullopt;
}

std::string lspFrame(llvm::StringRef Body) {
  return ("Content-Length: " + llvm::Twine(Body.size()) + "\r\n\r\n" + Body)
      .str();
}

std::string lspRejectionMessage(const LspRejection &Rejection) {
  json::Object Request{
      {"jsonrpc", "2.0"},
      {"id", Rejection.Id ? *Rejection.Id : json::Value(nullptr)},
      {"method", LspRejectedMethod},
      {"params",
       json::Object{{"code", Rejection.Code}, {"message", Rejection.Message}}}};
  std::string Body;
  llvm::raw_string_ostream(Body) << json::Value(std::move(Request));
  return lspFrame(Body);
}

LspInputFilter::LspInputFilter(ReadFunction Read, LspInputLimits Limits)
    : Read(std::move(Read)), Limits(Limits) {}

LspInputFilter::LspInputFilter(int Fd, LspInputLimits Limits)
    : LspInputFilter(
          [Fd](char *Buffer, size_t Size) { return ::read(Fd, Buffer, Size); },
          Limits) {}

bool LspInputFilter::fill() {
  if (InBegin < InEnd)
    return true;
  if (Ended)
    return false;
  In.resize(ChunkBytes);
  for (;;) {
    ssize_t Got = Read(In.data(), In.size());
    if (Got > 0) {
      InBegin = 0;
      InEnd = size_t(Got);
      return true;
    }
    if (Got < 0 && errno == EINTR)
      continue;
    Ended = true;
    Failed = Got < 0;
    return false;
  }
}

bool LspInputFilter::readLine(std::string &Line) {
  Line.clear();
  for (;;) {
    if (!fill())
      return false;
    const char *Begin = In.data() + InBegin;
    size_t Available = InEnd - InBegin;
    const void *NewLine = std::memchr(Begin, '\n', Available);
    size_t Take =
        NewLine ? static_cast<const char *>(NewLine) - Begin : Available;
    Line.append(Begin, Take);
    InBegin += Take + (NewLine ? 1 : 0);
    if (Line.size() > MaxLineBytes)
      Line.erase(0, Line.size() - KeptLineBytes);
    if (NewLine) {
      if (!Line.empty() && Line.back() == '\r')
        Line.pop_back();
      return true;
    }
  }
}

void LspInputFilter::reject(LspRejection Rejection) {
  Out = lspRejectionMessage(Rejection);
  OutBegin = 0;
  ++Refused;
}

bool LspInputFilter::next() {
  Out.clear();
  OutBegin = 0;
  // The rest of a body refused at its header: read past, never kept.
  while (ToSkip) {
    if (!fill())
      return false;
    size_t Take = size_t(std::min<uint64_t>(ToSkip, InEnd - InBegin));
    InBegin += Take;
    ToSkip -= Take;
  }
  std::optional<uint64_t> Length;
  std::string Problem, Line;
  bool AnyHeader = false;
  for (;;) {
    if (!readLine(Line))
      return false;
    if (Line.empty()) {
      if (AnyHeader)
        break;
      continue; // a blank line between messages
    }
    AnyHeader = true;
    // Found also at the end of another line: after a message that could
    // not be framed, its body and the next header share a line.
    size_t At = llvm::StringRef(Line).find_insensitive("content-length:");
    if (At == llvm::StringRef::npos)
      continue; // another header (Content-Type), or the rest of a body
    llvm::StringRef Value =
        llvm::StringRef(Line).drop_front(At + strlen("content-length:")).trim();
    uint64_t Bytes = 0;
    if (Value.empty() || Value.size() > 19 ||
        !llvm::all_of(Value, llvm::isDigit) || Value.getAsInteger(10, Bytes)) {
      Problem = "its Content-Length '" + printable(Value) +
                "' is not a number of bytes";
      Length.reset();
      continue;
    }
    Length = Bytes;
    Problem.clear();
  }
  if (!Problem.empty()) {
    reject({LspParseError, "a message was skipped: " + Problem, {}});
    return true;
  }
  if (!Length) {
    reject({LspParseError,
            "a message without a Content-Length header was skipped",
            {}});
    return true;
  }
  if (*Length == 0) {
    reject({LspParseError,
            "an empty message (Content-Length: 0) was skipped",
            {}});
    return true;
  }
  if (*Length > Limits.MaxMessageBytes) {
    // Answered now: the body may never come whole.
    ToSkip = *Length;
    reject({LspInvalidRequest,
            llvm::formatv("a message of {0} bytes (its Content-Length) is "
                          "skipped: the limit is {1} bytes",
                          *Length, Limits.MaxMessageBytes)
                .str(),
            {}});
    return true;
  }
  // The body as it comes: its Content-Length is not trusted with an
  // allocation.
  Out = "Content-Length: " + std::to_string(*Length) + "\r\n\r\n";
  size_t Head = Out.size();
  while (Out.size() - Head < *Length) {
    if (!fill()) {
      Out.clear(); // the stream ended within the body
      return false;
    }
    size_t Take = size_t(
        std::min<uint64_t>(*Length - (Out.size() - Head), InEnd - InBegin));
    if (Out.size() + Take > Out.capacity())
      Out.reserve(size_t(std::min<uint64_t>(
          Head + *Length, std::max<uint64_t>(2 * Out.capacity(), ChunkBytes))));
    Out.append(In.data() + InBegin, Take);
    InBegin += Take;
  }
  if (std::optional<LspRejection> Rejection =
          checkLspMessage(llvm::StringRef(Out).drop_front(Head), Limits)) {
    reject(std::move(*Rejection));
    return true;
  }
  ++Passed;
  return true;
}

ssize_t LspInputFilter::read(char *Buffer, size_t Size) {
  while (OutBegin == Out.size()) {
    // A large body's buffer is not kept for the small messages after it.
    if (Out.capacity() > ChunkBytes)
      std::string().swap(Out);
    if (!next())
      return Failed ? -1 : 0;
  }
  size_t Take = std::min(Size, Out.size() - OutBegin);
  std::memcpy(Buffer, Out.data() + OutBegin, Take);
  OutBegin += Take;
  return ssize_t(Take);
}

std::FILE *LspInputFilter::open() {
  cookie_io_functions_t Functions{};
  Functions.read = [](void *Cookie, char *Buffer, size_t Size) -> ssize_t {
    return static_cast<LspInputFilter *>(Cookie)->read(Buffer, Size);
  };
  Functions.close = [](void *) { return 0; };
  return fopencookie(this, "r", Functions);
}

} // namespace skyline
