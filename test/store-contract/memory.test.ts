import { memoryStore } from "../../src/store/memory.js";
import { runStoreContract } from "../../src/testing/index.js";
import { runTicketContract } from "../../src/testing/ticket-contract.js";

runStoreContract({
  name: "memory",
  create: async () => memoryStore(),
  skip: [
    {
      reason: "one process owns the memory: no other connection can commit",
      tests: [
        "change signal: commits by another connection call onExternalChange",
        "change signal: each listener is called, and unsubscribing one keeps the others",
        "pending quota: parallel creates through two connections leave exactly the quota pending",
      ],
    },
  ],
});

runTicketContract({ name: "memory", create: async () => memoryStore() });
