// The composite: one client over every composed connector, and flows of their calls.

export { Composite, ComposeError, Flow, Run, COMPOSE_ERROR_CODES, item, ref, Ref, Item, Cond, StepHandle } from "./flow.js";
export { FLOW_SCHEMA, PLAN_SCHEMA, RUN_SCHEMA } from "./flow.js";
export type {
  CallOptions,
  CompensateOptions,
  CompensationEntry,
  CompensationOutcome,
  CompositeOptions,
  ErrorJSON,
  Finding,
  FlowDocument,
  Plan,
  PlanNode,
  RunJSON,
  StepDocument,
  StepOptions,
  StepOutcome,
} from "./flow.js";
export { CATALOG } from "./catalog.js";
export type { Catalog, CatalogConnector, CatalogInput, CatalogOperation, CatalogUndo, ArgumentSource } from "./catalog.js";
export { CLIENTS } from "./clients.js";
export type { ConnectorOptions } from "./clients.js";
