// The tests' one seeded PRNG (mulberry32): small, deterministic, so a failing run replays from its seed.
export { mulberry32 as prng } from "../src/shared/prng.js";
