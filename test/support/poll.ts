/** The one poll-with-a-deadline helper lives in shared/testing, where the services' own tests reach it too. */
export { until } from '@pm/shared/testing';
