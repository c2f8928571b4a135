import { createClient } from '@pm/client';
const pm = createClient('http://localhost:3000');
const { data, error } = await pm.GET('/api/v1/markets', { params: { query: { category: 'Football', limit: 5 } } });
console.log(data ? data.events.map((e) => `${e.title}: ${e.markets[0]?.outcomes[0]?.odds.percent}`) : error);
