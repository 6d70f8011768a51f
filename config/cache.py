"""Django's Redis cache with one client object per connection pool instead of one per call.

Django's RedisCacheClient makes a new `redis.Redis` for every cache operation, and redis-py's constructor builds its
table of response callbacks each time (about 170 entries): a save's three cache reads spent more CPU making
clients than talking to Redis. A `redis.Redis` is thread-safe and holds nothing but its pool, so one per pool does.
"""

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient


class _ReusedClients(RedisCacheClient):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients = {}

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients[id(pool)] = self._client(connection_pool=pool)
        return client


class RedisCache(DjangoRedisCache):
    """settings.CACHES BACKEND "config.cache.RedisCache": the same cache, its clients reused."""

    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = _ReusedClients
