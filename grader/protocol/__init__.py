"""The one protocol between the grader's processes, as frozen types with validating decoders.

    parent --(worker_messages.Request / worker_messages.Ended, JSON lines)--> warm worker
    worker --fork--> judge (pytest + hidden suite) --fork--> sandbox (student module)
    judge  <--(sandbox.Request / sandbox.Reply, framed values)--> sandbox
    judge  --(records.Record, JSON lines on a pipe)--> worker --> parent

- `value_codec` how data crosses: arrays (dtype, shape and size checked), pytrees,
             remote handles, student exceptions as data; never pickles.
- `wire`     length-prefixed frames on a socket, with size limits.
- `sandbox`  what the judge may ask the sandbox, and the replies.
- `records`  what the judge reports to the parent about each check.
- `worker_messages` what the parent asks the warm worker, and how a file's grading ended.

Everything a sandbox sends is untrusted: decoders reject what they do not
expect instead of guessing.
"""
