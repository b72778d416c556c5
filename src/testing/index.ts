// airlock/testing: the Store contract, for a store of your own. Imports vitest (an optional peer
// dependency): use it from a vitest test file.
export {
  makeRequest,
  runStoreContract,
  type StoreContractOptions,
  type StoreInitializer,
} from "./store-contract.js";
