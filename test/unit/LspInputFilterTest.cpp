//===- LspInputFilterTest.cpp - skyline-lsp's input, framed and bounded ---===//

#include "skyline/LspInputFilter.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <malloc.h>

using namespace skyline;
namespace json = llvm::json;

namespace {

std::string frame(const std::string &Body) { return lspFrame(Body); }

/// A source that hands out Text at most Chunk bytes a read.
LspInputFilter::ReadFunction source(std::string Text, size_t Chunk = 4096) {
  auto At = std::make_shared<size_t>(0);
  auto Data = std::make_shared<std::string>(std::move(Text));
  return [At, Data, Chunk](char *Buffer, size_t Size) -> ssize_t {
    size_t Take = std::min({Size, Chunk, Data->size() - *At});
    std::memcpy(Buffer, Data->data() + *At, Take);
    *At += Take;
    return ssize_t(Take);
  };
}

/// Everything the filter gives out, read as the transport reads it.
std::string filtered(LspInputFilter &Filter) {
  std::string Out;
  char Buffer[1000];
  for (;;) {
    ssize_t Got = Filter.read(Buffer, sizeof(Buffer));
    if (Got <= 0)
      return Out;
    Out.append(Buffer, size_t(Got));
  }
}

std::string filtered(std::string Input, LspInputLimits Limits = {},
                     size_t Chunk = 4096) {
  LspInputFilter Filter(source(std::move(Input), Chunk), Limits);
  return filtered(Filter);
}

/// The messages of a framed stream (every frame exactly as lspFrame makes
/// it, so every header is "Content-Length: N").
std::vector<json::Value> messages(llvm::StringRef Stream) {
  std::vector<json::Value> Found;
  while (!Stream.empty()) {
    EXPECT_TRUE(Stream.consume_front("Content-Length: ")) << Stream.str();
    size_t Length = 0;
    EXPECT_FALSE(Stream.consumeInteger(10, Length));
    EXPECT_TRUE(Stream.consume_front("\r\n\r\n"));
    auto Parsed = json::parse(Stream.take_front(Length));
    if (!Parsed) {
      ADD_FAILURE() << llvm::toString(Parsed.takeError());
      return Found;
    }
    Found.push_back(std::move(*Parsed));
    Stream = Stream.drop_front(Length);
  }
  return Found;
}

const std::string Shutdown = R"({"jsonrpc":"2.0","id":9,"method":"shutdown"})";
json::Value shutdown() { return llvm::cantFail(json::parse(Shutdown)); }

/// The refusal's code and message; the id as JSON text.
struct Refusal {
  int64_t Code = 0;
  std::string Message, Id;
};

Refusal refusal(const json::Value &Message) {
  const json::Object *Object = Message.getAsObject();
  EXPECT_TRUE(Object);
  Refusal Result;
  if (!Object)
    return Result;
  EXPECT_EQ(Object->getString("method"),
            std::optional<llvm::StringRef>(LspRejectedMethod));
  const json::Object *Params = Object->getObject("params");
  EXPECT_TRUE(Params);
  if (Params) {
    Result.Code = Params->getInteger("code").value_or(0);
    Result.Message = Params->getString("message").value_or("").str();
  }
  if (const json::Value *Id = Object->get("id"))
    Result.Id = llvm::formatv("{0}", *Id).str();
  return Result;
}

TEST(LspInputFilterTest, PassesMessagesFramedAgain) {
  // Other headers, any case, a blank line between messages, reads of any
  // size: what passes is each body, framed as the transport reads it.
  std::string Input = "Content-Type: application/vscode-jsonrpc\r\n"
                      "content-length:   44\r\n\r\n" +
                      Shutdown + "\r\n" + frame(Shutdown);
  for (size_t Chunk : {size_t(1), size_t(7), size_t(4096)}) {
    LspInputFilter Filter(source(Input, Chunk));
    EXPECT_EQ(filtered(Filter), frame(Shutdown) + frame(Shutdown)) << Chunk;
    EXPECT_EQ(Filter.passed(), 2u);
    EXPECT_EQ(Filter.refused(), 0u);
  }
  // A response to one of the server's requests passes too.
  std::string Response = R"({"jsonrpc":"2.0","id":"skyline-refresh-1",)"
                         R"("result":null})";
  EXPECT_EQ(filtered(frame(Response)), frame(Response));
}

TEST(LspInputFilterTest, DeepNestingIsRefusedWithoutParsing) {
  // 1 MB of '[' overflowed MLIR's recursive parse.
  std::string Deep(1 << 20, '[');
  auto Out = messages(filtered(frame(Deep) + frame(Shutdown)));
  ASSERT_EQ(Out.size(), 2u);
  Refusal R = refusal(Out[0]);
  EXPECT_EQ(R.Code, LspInvalidRequest);
  EXPECT_EQ(R.Message,
            "a message nested 1048576 deep was skipped: the limit is 256");
  EXPECT_EQ(R.Id, "null");
  EXPECT_EQ(Out[1], shutdown());

  // A request's id is found without parsing: the client's request gets
  // its answer. A response's id is one of the server's: never used.
  std::string Params = std::string(300, '[') + std::string(300, ']');
  std::string Request =
      R"({"jsonrpc":"2.0","params":)" + Params + R"(,"id":7,"method":"x"})";
  Out = messages(filtered(frame(Request)));
  ASSERT_EQ(Out.size(), 1u);
  EXPECT_EQ(refusal(Out[0]).Id, "7");
  std::string Response =
      R"({"jsonrpc":"2.0","id":"s-1","result":)" + Params + "}";
  Out = messages(filtered(frame(Response)));
  ASSERT_EQ(Out.size(), 1u);
  EXPECT_EQ(refusal(Out[0]).Id, "null");
  // At the limit, it passes.
  std::string AtLimit = R"({"jsonrpc":"2.0","id":1,"method":"x","params":)" +
                        std::string(255, '[') + std::string(255, ']') + "}";
  EXPECT_EQ(filtered(frame(AtLimit)), frame(AtLimit));
}

TEST(LspInputFilterTest, ManyValuesAreRefused) {
  LspInputLimits Small;
  Small.MaxValues = 100;
  std::string Many = R"({"jsonrpc":"2.0","id":"a","method":"x","params":[0)";
  for (int I = 0; I < 200; ++I)
    Many += ",0";
  Many += "]}";
  auto Out = messages(filtered(frame(Many) + frame(Shutdown), Small));
  ASSERT_EQ(Out.size(), 2u);
  Refusal R = refusal(Out[0]);
  EXPECT_EQ(R.Code, LspInvalidRequest);
  EXPECT_EQ(R.Id, "\"a\"");
  EXPECT_NE(R.Message.find("JSON values was skipped: the limit is 100"),
            std::string::npos)
      << R.Message;
}

/// The bytes malloc holds in use now, large blocks (mmap) included.
size_t heapInUse() {
  struct mallinfo2 Info = mallinfo2();
  return Info.uordblks + Info.hblkhd;
}

TEST(LspInputFilterTest, AnOversizedBodyIsReadPastNeverHeld) {
  // One header of 1 GiB cost MLIR's transport 1.1 GB. The filter answers
  // at the header, before any of the body came, then reads past it in
  // chunks; the message after it is read as usual.
  const uint64_t Claimed = 1ull << 30;
  std::string Head = "Content-Length: " + std::to_string(Claimed) + "\r\n\r\n";
  std::string Tail = frame(Shutdown);
  uint64_t Given = 0; // bytes handed to the filter
  size_t Baseline = heapInUse(), MostInUse = Baseline;
  auto Read = [&](char *Buffer, size_t Size) -> ssize_t {
    MostInUse = std::max(MostInUse, heapInUse());
    // The header, then the body, then the next message, each read apart.
    uint64_t Body = Head.size(), After = Body + Claimed;
    if (Given < Body) {
      size_t Take = std::min(Size, size_t(Body - Given));
      std::memcpy(Buffer, Head.data() + Given, Take);
      Given += Take;
      return ssize_t(Take);
    }
    if (Given < After) {
      size_t Take = size_t(std::min<uint64_t>(Size, After - Given));
      std::memset(Buffer, '[', Take);
      Given += Take;
      return ssize_t(Take);
    }
    size_t Take = std::min(Size, size_t(After + Tail.size() - Given));
    std::memcpy(Buffer, Tail.data() + (Given - After), Take);
    Given += Take;
    return ssize_t(Take);
  };
  LspInputFilter Filter(Read);
  char Buffer[4096];
  ssize_t Got = Filter.read(Buffer, sizeof(Buffer)); // the whole refusal
  ASSERT_GT(Got, 0);
  // Answered with at most one chunk of the body read.
  EXPECT_LE(Given, Head.size() + (64 << 10));
  auto Out = messages(llvm::StringRef(Buffer, size_t(Got)));
  ASSERT_EQ(Out.size(), 1u);
  Refusal R = refusal(Out[0]);
  EXPECT_EQ(R.Code, LspInvalidRequest);
  EXPECT_EQ(R.Message, "a message of 1073741824 bytes (its Content-Length) is "
                       "skipped: the limit is 67108864 bytes");
  EXPECT_EQ(filtered(Filter), Tail);
  EXPECT_EQ(Given, Head.size() + Claimed + Tail.size());
  // Nothing near the body's size was ever held.
  EXPECT_LT(MostInUse - Baseline, size_t(1) << 20);
  EXPECT_EQ(Filter.passed(), 1u);
  EXPECT_EQ(Filter.refused(), 1u);
}

TEST(LspInputFilterTest, AShortBodyThenTheEndIsTheEnd) {
  // A large Content-Length under the limit, and the stream ends first:
  // nothing is passed, and the body was never allocated ahead of its bytes.
  std::string Input = "Content-Length: 60000000\r\n\r\n{\"a\"";
  bool Sent = false;
  size_t Baseline = heapInUse(), MostInUse = Baseline;
  LspInputFilter Filter([&](char *Buffer, size_t Size) -> ssize_t {
    MostInUse = std::max(MostInUse, heapInUse());
    if (Sent)
      return 0;
    Sent = true;
    std::memcpy(Buffer, Input.data(), Input.size());
    return ssize_t(Input.size());
  });
  EXPECT_EQ(filtered(Filter), "");
  EXPECT_LT(MostInUse - Baseline, size_t(1) << 20);
  EXPECT_EQ(Filter.passed() + Filter.refused(), 0u);
}

TEST(LspInputFilterTest, BadHeadersAreAnsweredAndTheNextMessageRead) {
  struct Case {
    std::string Input, Message;
  } Cases[] = {
      {"Content-Length: abc\r\n\r\n{\"x\":1}",
       "a message was skipped: its Content-Length 'abc' is not a number of "
       "bytes"},
      {"Content-Length: -5\r\n\r\n{\"x\":1}\r\n",
       "a message was skipped: its Content-Length '-5' is not a number of "
       "bytes"},
      {"Content-Length: 99999999999999999999999\r\n\r\n",
       "a message was skipped: its Content-Length '99999999999999999999999' "
       "is not a number of bytes"},
      {"Content-Type: text/plain\r\n\r\n{\"x\":1}",
       "a message without a Content-Length header was skipped"},
      {"Content-Length: 0\r\n\r\n",
       "an empty message (Content-Length: 0) was skipped"},
  };
  for (const Case &C : Cases) {
    auto Out = messages(filtered(C.Input + frame(Shutdown)));
    ASSERT_EQ(Out.size(), 2u) << C.Input;
    Refusal R = refusal(Out[0]);
    EXPECT_EQ(R.Code, LspParseError) << C.Input;
    EXPECT_EQ(R.Message, C.Message);
    EXPECT_EQ(R.Id, "null");
    // The body that could not be framed is read past: the next message
    // is found, also where it follows the body on the same line.
    EXPECT_EQ(Out[1], shutdown()) << C.Input;
  }
}

TEST(LspInputFilterTest, AnOverlongLineIsNotHeld) {
  // 1 MB without a line end, then a message on the same line.
  std::string Input = std::string(1 << 20, 'x') + frame(Shutdown);
  EXPECT_EQ(filtered(Input), frame(Shutdown));
}

TEST(LspInputFilterTest, MessagesThatAreNotJsonRpcAreAnswered) {
  // JSON that MLIR's transport took for `exit` (it ended the session).
  struct Case {
    std::string Body;
    int Code;
    std::string Message, Id;
  } Cases[] = {
      {"{not json", LspParseError, "a message that is not JSON was skipped",
       "null"},
      {"[1,2]", LspInvalidRequest,
       "a message that is not a JSON object was skipped", "null"},
      {R"({"id":3,"method":"shutdown"})", LspInvalidRequest,
       "a message without \"jsonrpc\": \"2.0\" was skipped", "3"},
      {R"({"jsonrpc":"2.0"})", LspInvalidRequest,
       "a message with neither a method nor an id was skipped", "null"},
      {R"({"jsonrpc":"2.0","id":4,"method":5})", LspInvalidRequest,
       "a message whose method is not a string was skipped", "null"},
      {"\"\xff\"", LspParseError, "a message that is not JSON was skipped",
       "null"},
  };
  for (const Case &C : Cases) {
    auto Out = messages(filtered(frame(C.Body) + frame(Shutdown)));
    ASSERT_EQ(Out.size(), 2u) << C.Body;
    Refusal R = refusal(Out[0]);
    EXPECT_EQ(R.Code, C.Code) << C.Body;
    EXPECT_EQ(R.Message.substr(0, C.Message.size()), C.Message) << C.Body;
    EXPECT_EQ(R.Id, C.Id) << C.Body;
    EXPECT_EQ(Out[1], shutdown());
  }
}

TEST(LspInputFilterTest, AReadErrorEndsTheStreamAsAnError) {
  bool First = true;
  std::string Message = frame(Shutdown);
  LspInputFilter Filter([&](char *Buffer, size_t Size) -> ssize_t {
    if (!First) {
      errno = EIO;
      return -1;
    }
    First = false;
    std::memcpy(Buffer, Message.data(), Message.size());
    return ssize_t(Message.size());
  });
  char Buffer[4096];
  EXPECT_EQ(Filter.read(Buffer, sizeof(Buffer)), ssize_t(Message.size()));
  EXPECT_EQ(Filter.read(Buffer, sizeof(Buffer)), -1);
}

TEST(LspInputFilterTest, ReadThroughAFile) {
  // As JSONTransport reads it: fgets for the headers, fread for the body.
  std::string Deep(1000, '{');
  LspInputFilter Filter(source(frame(Deep) + frame(Shutdown), 3));
  std::FILE *File = Filter.open();
  ASSERT_TRUE(File);
  std::string All;
  char Buffer[128];
  size_t Got;
  while ((Got = std::fread(Buffer, 1, sizeof(Buffer), File)) > 0)
    All.append(Buffer, Got);
  EXPECT_TRUE(std::feof(File));
  std::fclose(File);
  auto Out = messages(All);
  ASSERT_EQ(Out.size(), 2u);
  EXPECT_EQ(refusal(Out[0]).Code, LspInvalidRequest);
  EXPECT_EQ(Out[1], shutdown());
}

} // namespace
