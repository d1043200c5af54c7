"""The sandbox: the only process that imports a student's lesson file.

- `launch`     the judge forks its sandbox (before JAX starts) and talks to it
- `isolation`  what the sandbox may do: levels `strict`, `user`, `basic`, and dropping privileges
- `jax_cache`  JAX's compilation cache in the judge and the sandbox (the sandbox's own, layered)
- `server`     the sandbox's loop: import the module, answer the judge's requests
- `decoding`   the lesson file's text, decoded as `python3` decodes it (PEP 263)
- `client`     the judge's view: `Remote` handles, `StudentError`, transforms
- `probes`     grader code the judge may run in the sandbox (jaxprs, trace counts, purity)
- `public_inputs` functions and objects the judge may hand to student code, by name
"""
