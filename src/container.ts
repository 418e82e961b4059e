import type { Router } from 'express';
import type { Logger } from 'pino';
import { CredentialsRepository } from './auth/credentials.repository.js';
import { EventRecorder } from './events/event.repository.js';
import type { TokenVerifier } from './auth/token.js';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { Db } from './db/knex.js';
import type { RateLimitStore } from './http/rate-limit-store.js';
import type { OpenApiRegistration } from './openapi/document.js';
import type { JobQueue } from './jobs/queue.js';
import { Workers, type BackgroundWorker } from './jobs/workers.js';
import { AgentAccess } from './modules/agents/agent-access.js';
import { registerAgentPaths } from './modules/agents/agent.openapi.js';
import { AgentRepository } from './modules/agents/agent.repository.js';
import { agentRouter } from './modules/agents/agent.router.js';
import { AgentService } from './modules/agents/agent.service.js';
import { registerApiKeyPaths } from './modules/api-keys/api-key.openapi.js';
import { ApiKeyRepository } from './modules/api-keys/api-key.repository.js';
import { apiKeyRouter } from './modules/api-keys/api-key.router.js';
import { ApiKeyService } from './modules/api-keys/api-key.service.js';
import { registerHealthPaths } from './modules/health/health.openapi.js';
import { HealthService } from './modules/health/health.service.js';
import { registerOrganizationPaths } from './modules/organizations/organization.openapi.js';
import { OrganizationRepository } from './modules/organizations/organization.repository.js';
import { organizationRouter } from './modules/organizations/organization.router.js';
import { OrganizationService } from './modules/organizations/organization.service.js';
import { registerContactPaths } from './modules/contacts/contact.openapi.js';
import { ContactRepository } from './modules/contacts/contact.repository.js';
import { contactRouter } from './modules/contacts/contact.router.js';
import { ContactService } from './modules/contacts/contact.service.js';
import { registerEmployeePaths } from './modules/employees/employee.openapi.js';
import { EmployeeRepository } from './modules/employees/employee.repository.js';
import { employeeRouter } from './modules/employees/employee.router.js';
import { EmployeeService } from './modules/employees/employee.service.js';
import { registerForwardingSlotPaths } from './modules/forwarding-slots/forwarding-slot.openapi.js';
import { ForwardingSlotRepository } from './modules/forwarding-slots/forwarding-slot.repository.js';
import { forwardingSlotRouter } from './modules/forwarding-slots/forwarding-slot.router.js';
import { ForwardingSlotService } from './modules/forwarding-slots/forwarding-slot.service.js';
import { ToolReferences } from './modules/tools/tool-references.js';
import { registerToolPaths } from './modules/tools/tool.openapi.js';
import { ToolRepository } from './modules/tools/tool.repository.js';
import { toolRouter } from './modules/tools/tool.router.js';
import { ToolService } from './modules/tools/tool.service.js';

export type AppDeps = {
  config: Config;
  db: Db;
  logger: Logger;
  clock: Clock;
  rateLimitStore: RateLimitStore;
  verifyToken: TokenVerifier;
  queue: JobQueue;
};

export type Container = ReturnType<typeof buildContainer>;

/** Hand wiring: repositories(db) -> services -> routers. */
export function buildContainer(deps: AppDeps) {
  const { db, clock, config } = deps;

  const credentials = new CredentialsRepository(db);
  const agentRepository = new AgentRepository(db);
  const agentAccess = new AgentAccess(agentRepository);
  const events = new EventRecorder(deps.queue);
  const employeeRepository = new EmployeeRepository(db);
  const toolRepository = new ToolRepository(db);
  const toolReferences = new ToolReferences(employeeRepository, agentRepository, config.WEBHOOK_ALLOW_PRIVATE_TARGETS);

  const services = {
    health: new HealthService(db, clock, { version: config.APP_VERSION, commit: config.APP_COMMIT }),
    agents: new AgentService(agentRepository, agentAccess),
    organizations: new OrganizationService(new OrganizationRepository(db)),
    apiKeys: new ApiKeyService(new ApiKeyRepository(db), clock),
    employees: new EmployeeService(db, employeeRepository, toolRepository, agentAccess, events, clock),
    forwardingSlots: new ForwardingSlotService(db, new ForwardingSlotRepository(db), agentAccess, clock),
    tools: new ToolService(db, toolRepository, toolReferences, agentAccess, clock),
    contacts: new ContactService(new ContactRepository(db), agentAccess, clock),
  };

  /** Routers under /v1 behind authentication and rate limiting. */
  const routes: { path: string; router: Router }[] = [
    { path: '/agents', router: agentRouter(services.agents) },
    { path: '/organization', router: organizationRouter(services.organizations) },
    { path: '/agents/:agentId/employees', router: employeeRouter(services.employees) },
    { path: '/agents/:agentId/forwarding-slots', router: forwardingSlotRouter(services.forwardingSlots) },
    { path: '/agents/:agentId/tools', router: toolRouter(services.tools) },
    { path: '/agents/:agentId/contacts', router: contactRouter(services.contacts) },
  ];

  const openapi: OpenApiRegistration[] = [registerHealthPaths, registerApiKeyPaths, registerAgentPaths, registerOrganizationPaths];
  openapi.push(registerEmployeePaths, registerForwardingSlotPaths, registerToolPaths, registerContactPaths);

  /** Started by main.ts when WORKERS_ENABLED; tests drive them directly. */
  const backgroundWorkers: BackgroundWorker[] = [];

  return {
    credentials,
    events,
    services,
    routes,
    apiKeyRouter: apiKeyRouter(services.apiKeys),
    openapi,
    workers: new Workers(backgroundWorkers),
  };
}
