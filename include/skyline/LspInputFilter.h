//===- LspInputFilter.h - skyline-lsp's input, framed and bounded -*- C++
//-*-===//
//
// What the client sends is framed and checked here before MLIR's
// JSONTransport reads it: that transport allocates a message's whole
// Content-Length before reading it (1.1 GB for one header line), parses
// JSON recursively (1 MB of '[' overflowed the stack), and ends the session,
// as if told `exit`, on a message that is JSON but no JSON-RPC 2.0 message.
// The filter passes the transport well-formed messages only, each under
// the limits below; in place of one it refuses, it passes a small request
// of its own (LspRejectedMethod) that the server answers with the error,
// so the error goes out through the transport's output lock like every
// other reply. docs/reliability.md, "The editor's server".
//
//===----------------------------------------------------------------------===//
#ifndef SKYLINE_LSPINPUTFILTER_H
#define SKYLINE_LSPINPUTFILTER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace skyline {

/// The largest message body taken (its Content-Length). One above it is
/// read past in fixed chunks, never held. 64 MiB is a 64 MiB source in a
/// didOpen, the limit on any source a report names (InputFile.h).
constexpr uint64_t LspMaxMessageBytes = 64ull << 20;
/// The deepest nesting of arrays and objects in a message; MLIR's parser
/// recurses once a level.
constexpr unsigned LspMaxNesting = 256;
/// The most JSON values in a message (a parsed value takes about 50 bytes).
constexpr uint64_t LspMaxValues = 1000000;

struct LspInputLimits {
  uint64_t MaxMessageBytes = LspMaxMessageBytes;
  unsigned MaxNesting = LspMaxNesting;
  uint64_t MaxValues = LspMaxValues;
};

/// The method of the request that stands for a refused message. Its params
/// are {"code": <JSON-RPC error code>, "message": <why>}; its id is the
/// refused request's where that is known, else null. The server answers it
/// with that error (and says why in window/logMessage).
constexpr llvm::StringLiteral LspRejectedMethod = "$/skyline/rejectedMessage";

/// JSON-RPC's codes for what the filter refuses: what cannot be read as a
/// message (no Content-Length, not JSON) ...
constexpr int LspParseError = -32700;
/// ... and a message read but not taken (over a limit, not JSON-RPC 2.0).
constexpr int LspInvalidRequest = -32600;

/// Why one message is refused.
struct LspRejection {
  int Code = LspInvalidRequest;
  std::string Message;
  /// The request's id (a number or a string) where known.
  std::optional<llvm::json::Value> Id;
};

/// The checks on one message's body, in this order and without recursion
/// until the nesting is known to be within the limit: nesting, the number
/// of values, JSON, a JSON-RPC 2.0 message (an object with "jsonrpc":
/// "2.0", a string "method" or, for a response, an "id"). None: it is
/// taken.
std::optional<LspRejection> checkLspMessage(llvm::StringRef Body,
                                            const LspInputLimits &Limits = {});

/// The framed request that stands for Rejection (LspRejectedMethod).
std::string lspRejectionMessage(const LspRejection &Rejection);

/// Frames a body as the transport reads it.
std::string lspFrame(llvm::StringRef Body);

/// Reads the client's stream through Read and gives out, through read(),
/// the stream the transport reads: each message the checks take, framed
/// again, or the request that stands for one they refuse. Headers other
/// than Content-Length are ignored; after a header that cannot be read
/// (no Content-Length, one that is no number of bytes) the filter looks
/// for the next "Content-Length:" line, also at the end of another line
/// (the rest of a body it could not frame), and goes on from there. A body
/// over MaxMessageBytes is refused at its header, then read past.
class LspInputFilter {
public:
  /// Reads at most Size bytes of the client's stream into Buffer: the count,
  /// 0 at its end, -1 on an error (errno says which; EINTR is retried).
  using ReadFunction = std::function<ssize_t(char *Buffer, size_t Size)>;

  explicit LspInputFilter(ReadFunction Read, LspInputLimits Limits = {});
  /// Reads the client's stream from a file descriptor.
  explicit LspInputFilter(int Fd, LspInputLimits Limits = {});
  LspInputFilter(const LspInputFilter &) = delete;
  LspInputFilter &operator=(const LspInputFilter &) = delete;

  /// At most Size bytes of the filtered stream: the count, 0 once the
  /// client's stream has ended, -1 where reading it failed.
  ssize_t read(char *Buffer, size_t Size);

  /// The filtered stream as a FILE* for JSONTransport (fopencookie); the
  /// filter must outlive it. Null where it cannot be made.
  std::FILE *open();

  /// The messages passed on and refused so far.
  uint64_t passed() const { return Passed; }
  uint64_t refused() const { return Refused; }

private:
  /// Puts the next message, or the request for a refused one, in Out; false
  /// once the client's stream has ended.
  bool next();
  /// Makes sure the input buffer holds a byte; false at the end.
  bool fill();
  /// One header line, without its end: false at the end of the stream.
  /// An overlong line keeps only its last part.
  bool readLine(std::string &Line);
  void reject(LspRejection Rejection);

  ReadFunction Read;
  LspInputLimits Limits;
  std::vector<char> In; // what was read and not yet used
  size_t InBegin = 0, InEnd = 0;
  bool Ended = false, Failed = false;
  std::string Out; // what read() gives next
  size_t OutBegin = 0;
  /// The rest of a refused body, still to be read past.
  uint64_t ToSkip = 0;
  uint64_t Passed = 0, Refused = 0;
};

} // namespace skyline

#endif // SKYLINE_LSPINPUTFILTER_H
